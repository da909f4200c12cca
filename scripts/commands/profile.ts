// `workshop profile <ex>`: runs one server under the exercise's load with a profiler and writes a report
// to open in a browser, under .hotpath/profiles/, then says what to look for in it.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchProgress } from '../bench-progress.ts';
import { specFor, type ServerChoice, type ServerSpec } from '../bench.ts';
import { waitUntilIdle } from '../idle.ts';
import type { Exercise } from '../exercises.ts';
import { bold, dim, integer, red, yellow } from '../format.ts';
import type { LoadProgress } from '../load.ts';
import type { LoadResult } from '../result.ts';
import { runLoad } from '../load.ts';
import { ROOT, relativeToRoot } from '../paths.ts';
import { startServer } from '../server-process.ts';
import { startServices, type Services } from '../services/index.ts';
import { ProfileError, runClinic } from '../profile/clinic.ts';
import { locateWith, profileToTree, type CpuProfile } from '../profile/cpu-tree.ts';
import { flameGraphHtml } from '../profile/flame-html.ts';
import { exerciseAdvice, readingAdvice } from '../profile/advice.ts';
import { chooseTool, limitNote, type ProfileTool } from '../profile/tools.ts';

export const PROFILES_DIR = path.join(ROOT, '.hotpath', 'profiles');
/** Preloaded into every server; its frames show in a CPU profile too. */
const PROBE_FILE = path.join(ROOT, 'scripts', 'probe', 'inject.ts');

export interface ProfileOptions {
  choice: ServerChoice;
  /** Undefined: the best tool that works on this Node. */
  tool?: ProfileTool;
  /** Start the server with --trace-warnings and show the warnings it printed. */
  traceWarnings: boolean;
  /** Where the profile folders go (tests use a temporary one). */
  profilesDir?: string;
}

export interface ProfileResult {
  tool: ProfileTool;
  /** The HTML to open, absolute. */
  html: string;
  dir: string;
  load: LoadResult;
  /** What the server printed, from which the warnings are taken. */
  output: string;
  seconds: number;
}

/** The command: progress on stderr, the HTML's path and what to look for on stdout. Exit code 0 when written. */
export async function profile(exercise: Exercise, options: ProfileOptions): Promise<number> {
  let result: ProfileResult;
  try {
    result = await writeProfile(exercise, options);
  } catch (error) {
    if (!(error instanceof ProfileError)) throw error;
    process.stderr.write(`${red('error:')} ${error.message}\n${error.output ? dim(tail(error.output)) + '\n' : ''}`);
    return 1;
  }
  const { load } = result;
  const lines = [
    '',
    `${bold('profile:')} ${relativeToRoot(result.html)}`,
    dim(`open it in a browser: ${pathToFileURL(result.html).href}`),
    dim(
      `under load: ${integer(load.requestsPerSecond.mean)} req/s, p99 ${integer(load.latency.p99)} ms` +
        `${load.errors + load.timeouts > 0 ? `, ${integer(load.errors + load.timeouts)} errors and timeouts` : ''}; ${result.tool} took ${result.seconds.toFixed(1)} s in all`,
    ),
  ];
  const limit = limitNote(result.tool);
  if (limit) lines.push(yellow(`Note: ${limit}.`));
  if (result.tool !== 'cpu' && exercise.manifest.load.settleAfterWarmup) {
    // clinic's server has no probe to ask whether it is idle again.
    lines.push(dim("(under clinic the measured phase starts without waiting for the warm-up's slow requests, so these figures read lower than verify's)"));
  }
  lines.push('', `${bold('How to read it:')} ${readingAdvice(result.tool)}`);
  const advice = exerciseAdvice(exercise);
  if (advice.text) lines.push('', `${bold('What to look for:')} ${advice.text}`);
  if (advice.locked) lines.push('', dim(advice.locked));
  if (options.traceWarnings) {
    const warnings = warningsIn(result.output);
    lines.push('', warnings.length > 0 ? bold(`The server printed ${warnings.length} warning(s):`) : dim('The server printed no warnings.'), ...warnings.map((w) => dim(w)));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** Runs the profile and writes its folder; on any failure (or Ctrl-C) the folder is removed. */
export async function writeProfile(exercise: Exercise, options: ProfileOptions): Promise<ProfileResult> {
  const started = performance.now();
  const spec = specFor(exercise, options.choice);
  const choice = chooseTool(options.tool);
  if (choice.fallback) process.stderr.write(`${yellow(choice.fallback)}\n`);
  const { tool } = choice;
  const dir = path.join(options.profilesDir ?? PROFILES_DIR, folderName(exercise.manifest.id, spec.run.label, tool));
  mkdirSync(dir, { recursive: true });
  let written = false;
  const removeUnfinished = () => {
    if (!written) rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeUnfinished);

  const progress = benchProgress();
  const onProgress = (load: LoadProgress) => progress({ type: 'load', label: spec.run.label, progress: load });
  const status = statusLine();
  const requests = exercise.manifest.services ?? [];
  if (requests.length > 0) progress({ type: 'services', names: requests.map((r) => r.kind) });
  let services: Services | undefined;
  try {
    services = await startServices(requests);
    const { env } = await services.prepare();
    const nodeFlags = [...spec.run.nodeFlags, ...(options.traceWarnings ? ['--trace-warnings'] : [])];
    const load = exercise.manifest.load;
    progress({ type: 'starting', label: `${spec.run.label} with ${tool === 'cpu' ? 'node --cpu-prof' : `clinic ${tool}`}`, index: 0, of: 1 });
    let html: string;
    let loadResult: LoadResult;
    let output: string;
    if (tool === 'cpu') {
      ({ html, load: loadResult, output } = await profileCpu(exercise, spec, { dir, env, nodeFlags, onProgress, status }));
    } else {
      const loadSeconds = load.warmupSeconds + load.durationSeconds;
      ({ html, load: loadResult, output } = await runClinic({
        tool,
        serverFile: spec.absoluteFile,
        nodeFlags,
        env,
        load,
        dir,
        // Measured: about 12 s past the load for 7 s of load (flame's analysis is the longest).
        timeoutMs: (60 + 4 * loadSeconds) * 1000,
        onProgress,
        onStatus: status,
      }));
    }
    status(`written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    written = true;
    return { tool, html, dir, load: loadResult, output, seconds: (performance.now() - started) / 1000 };
  } finally {
    await services?.stop();
    removeUnfinished();
    process.removeListener('exit', removeUnfinished);
  }
}

interface CpuRun {
  dir: string;
  env: Record<string, string>;
  nodeFlags: string[];
  onProgress(progress: LoadProgress): void;
  status(message: string): void;
}

/**
 * The runtime's own profiler: the server runs with --cpu-prof, and after the load is asked to exit
 * normally, since V8 writes the profile only then. Positions in .ts files are mapped back through the
 * source maps tsx made, which the probe hands over before the server exits.
 */
async function profileCpu(exercise: Exercise, spec: ServerSpec, run: CpuRun): Promise<{ html: string; load: LoadResult; output: string }> {
  const server = await startServer(spec.absoluteFile, { nodeFlags: [...run.nodeFlags, '--cpu-prof', `--cpu-prof-dir=${run.dir}`], env: run.env });
  let load: LoadResult;
  let maps;
  try {
    const loadProfile = exercise.manifest.load;
    // As verify does: where the warm-up leaves slow requests behind (03), measure once they are done.
    load = await runLoad(server.url, loadProfile, run.onProgress, () => (loadProfile.settleAfterWarmup ? waitUntilIdle(server) : undefined));
    maps = await server.sourceMaps([...sourceFiles(exercise), spec.absoluteFile, PROBE_FILE]);
  } finally {
    run.status('the server is exiting, and V8 writes its profile...');
    await server.exitNormally();
  }
  const exit = server.exit();
  if (exit?.code !== 0) {
    throw new ProfileError(`the server did not exit normally (${exit?.signal ?? `exit code ${exit?.code}`}), so V8 wrote no profile`, server.output());
  }
  const file = takeMainProfile(run.dir, server.pid);
  run.status('writing the flame graph...');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const tree = profileToTree(profile, { locate: locateWith(maps), root: ROOT });
  if (tree.total <= 0) throw new ProfileError(`the CPU profile ${relativeToRoot(file)} holds no samples`, server.output());
  const { manifest } = exercise;
  const { connections, warmupSeconds, durationSeconds } = manifest.load;
  const advice = exerciseAdvice(exercise);
  const html = path.join(run.dir, 'flame.html');
  writeFileSync(
    html,
    flameGraphHtml(tree, {
      title: `${manifest.id}: ${spec.run.label} (${spec.run.title})`,
      details: [
        `${spec.run.file} on Node ${process.version}${spec.run.nodeFlags.length > 0 ? ` with ${spec.run.nodeFlags.join(' ')}` : ''}, ` +
          `profiled with --cpu-prof for ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, from start to exit`,
        `load: ${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s measured: ` +
          `${integer(load.requestsPerSecond.mean)} req/s, p99 ${integer(load.latency.p99)} ms`,
        `written ${new Date().toLocaleString()}; the raw profile is ${path.basename(file)} beside this page (Chrome DevTools opens it too)`,
      ],
      lookFor: [readingAdvice('cpu'), advice.text ?? advice.locked].filter(Boolean).join(' '),
    }),
  );
  return { html, load, output: server.output() };
}

/**
 * V8 writes one profile per thread, named CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; on Node 20,
 * tsx's loader thread gets one too. Keeps the main thread's (thread 0) as server.cpuprofile, drops the rest.
 */
function takeMainProfile(dir: string, pid: number): string {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  const main = files.find((name) => name.includes(`.${pid}.0.`));
  if (!main) throw new ProfileError(`V8 wrote no CPU profile for the server's main thread in ${relativeToRoot(dir)}`);
  for (const other of files) if (other !== main) rmSync(path.join(dir, other));
  const kept = path.join(dir, 'server.cpuprofile');
  renameSync(path.join(dir, main), kept);
  return kept;
}

/** The TypeScript files of the exercise and its solutions: the ones whose positions are worth mapping. */
function sourceFiles(exercise: Exercise): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') visit(file);
      else if (entry.isFile() && entry.name.endsWith('.ts')) found.push(file);
    }
  };
  visit(exercise.dir);
  visit(exercise.solutionsDir);
  return found;
}

/** .hotpath/profiles/<id>-<label>-<tool>-<timestamp>: one folder per profile, never overwritten. */
export function folderName(id: string, label: string, tool: ProfileTool, when = new Date()): string {
  const stamp = when.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return `${id}-${label.replace(/[^a-z0-9]+/gi, '-')}-${tool}-${stamp}`;
}

/** A status line on stderr, below the progress line that a terminal rewrites in place. */
function statusLine(stream: NodeJS.WriteStream = process.stderr): (message: string) => void {
  return (message) => stream.write(`${stream.isTTY ? '\r\u001b[2K' : ''}${message}\n`);
}

/**
 * The warnings a Node process printed: "(node:123) SomeWarning: ..." lines, each with the stack
 * --trace-warnings prints under it.
 */
export function warningsIn(output: string): string[] {
  const warnings: string[][] = [];
  let current: string[] | undefined;
  for (const line of output.split('\n')) {
    if (/^\(node:\d+\) (\[[\w-]+\] )?\w*(Warning|Deprecation)\b/.test(line)) warnings.push((current = [line]));
    else if (current && /^\s+at /.test(line)) current.push(line);
    else current = undefined;
  }
  return warnings.map((lines) => lines.join('\n'));
}

function tail(output: string, lines = 30): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}
