// `workshop profile <ex> --diff`: two servers of the exercise (the shipped one and yours by default, or a
// stage with --stage) profiled one after the other under the same load with `node --cpu-prof`, drawn as
// one differential flame graph: the shipped server's shape, each frame coloured by what its time per
// answer became on the other side. Written under .hotpath/profiles/ like a profile.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchProgress } from '../bench-progress.ts';
import { specFor, type ServerChoice, type ServerSpec } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim, integer, red } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { ProfileError } from '../profile/clinic.ts';
import { cpuProfileOf, type CpuProfileRun } from '../profile/cpu-run.ts';
import { diffTrees, functionChanges, type DiffFrame } from '../profile/diff-tree.ts';
import { diffFlameGraphHtml } from '../profile/flame-html.ts';
import { startServices } from '../services/index.ts';
import { folderName, PROFILES_DIR } from './profile.ts';

export interface DiffOptions {
  /** The first side, whose shape is drawn (default: the shipped server). */
  before?: ServerChoice;
  /** The other side (default: your server.ts). */
  after: ServerChoice;
  profilesDir?: string;
}

export interface DiffResult {
  html: string;
  dir: string;
  tree: DiffFrame;
  sides: Array<{ label: string; answers: number; requestsPerSecond: number }>;
}

export async function profileDiff(exercise: Exercise, options: DiffOptions): Promise<number> {
  let result: DiffResult;
  try {
    result = await writeDiffProfile(exercise, options);
  } catch (error) {
    if (!(error instanceof ProfileError)) throw error;
    process.stderr.write(`${red('error:')} ${error.message}\n`);
    return 1;
  }
  const [a, b] = result.sides;
  const lines = [
    '',
    `${bold('differential profile:')} ${relativeToRoot(result.html)}`,
    dim(`open it in a browser: ${pathToFileURL(result.html).href}`),
    dim(`${a!.label}: ${integer(a!.requestsPerSecond)} req/s, ${integer(a!.answers)} answers; ${b!.label}: ${integer(b!.requestsPerSecond)} req/s, ${integer(b!.answers)} answers`),
    '',
    `${bold('How to read it:')} the shape is ${a!.label}'s profile, each width its time per answer; the colour is what that time became in ${b!.label}: ` +
      'red where it grew, blue where it shrank, deep blue where it vanished, grey within 10%. Frames only the second side has are in the table under the graph.',
    '',
    bold('Changed most, self time per answer:'),
    ...functionChanges(result.tree, 5).map((c) => `  ${c.name}${c.file ? ` (${c.file})` : ''}: ${us(c.before)} → ${us(c.after)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

const us = (value: number) => `${value.toFixed(1)} µs`;

/** Profiles both sides, one after the other, and writes the page; on a failure the folder is removed. */
export async function writeDiffProfile(exercise: Exercise, options: DiffOptions): Promise<DiffResult> {
  const specs = [specFor(exercise, options.before ?? 'broken'), specFor(exercise, options.after)];
  const [first, second] = specs as [ServerSpec, ServerSpec];
  const dir = path.join(options.profilesDir ?? PROFILES_DIR, folderName(exercise.manifest.id, `${first.run.label}-vs-${second.run.label}`, 'cpu'));
  let written = false;
  const removeUnfinished = () => {
    if (!written) rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeUnfinished);
  try {
    const progress = benchProgress();
    const runs: CpuProfileRun[] = [];
    for (const [index, spec] of specs.entries()) {
      const sideDir = path.join(dir, index === 0 ? 'first' : 'second');
      mkdirSync(sideDir, { recursive: true });
      progress({ type: 'starting', label: `${spec.run.label} with node --cpu-prof`, index, of: 2 });
      const services = await startServices(exercise.manifest.services ?? []);
      try {
        const { env } = await services.prepare();
        runs.push(
          await cpuProfileOf(exercise, spec, {
            dir: sideDir,
            env,
            nodeFlags: spec.run.nodeFlags,
            onProgress: (load) => progress({ type: 'load', label: spec.run.label, progress: load }),
            status: (message) => process.stderr.write(`${message}\n`),
          }),
        );
      } finally {
        await services.stop();
      }
    }
    const [a, b] = runs as [CpuProfileRun, CpuProfileRun];
    const tree = diffTrees(a.tree, a.load.answered, b.tree, b.load.answered);
    const { connections, warmupSeconds, durationSeconds } = exercise.manifest.load;
    const html = path.join(dir, 'diff.html');
    writeFileSync(
      html,
      diffFlameGraphHtml(tree, {
        title: `${exercise.manifest.id}: ${first.run.label} → ${second.run.label}, time per answer`,
        details: [
          `${first.run.file} (${first.run.title}) → ${second.run.file} (${second.run.title}), on Node ${process.version}, each profiled with --cpu-prof from start to exit`,
          `the same load on each, one after the other: ${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s measured; ` +
            `${integer(a.load.requestsPerSecond.mean)} → ${integer(b.load.requestsPerSecond.mean)} req/s, ${integer(a.load.answered)} and ${integer(b.load.answered)} answers`,
          `written ${new Date().toLocaleString()}; the raw profiles are first/server.cpuprofile and second/server.cpuprofile beside this page`,
        ],
        before: first.run.label,
        after: second.run.label,
      }),
    );
    written = true;
    return {
      html,
      dir,
      tree,
      sides: [
        { label: first.run.label, answers: a.load.answered, requestsPerSecond: a.load.requestsPerSecond.mean },
        { label: second.run.label, answers: b.load.answered, requestsPerSecond: b.load.requestsPerSecond.mean },
      ],
    };
  } finally {
    removeUnfinished();
    process.removeListener('exit', removeUnfinished);
  }
}
