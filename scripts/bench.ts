// Runs a set of servers of one exercise, each in its own process: start, correctness probe, load (warm-up
// then measured) with the probe's figures, stop. Then judges them. Used by verify, demo, run --load and the
// author check, so they all measure the same way. This module chooses how the servers are measured (in
// turns, side by side, or one after another); measuring them is in measure-*.ts.
import { readFileSync } from 'node:fs';
import { judgeBeforeListening } from './before-listening.ts';
import type { BenchOptions, ServerChoice, ServerSpec } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { measureInTurns } from './measure-in-turns.ts';
import { measureServer, measureStarted } from './measure-server.ts';
import { relativeToRoot } from './paths.ts';
import { exerciseProgress, readProgress, solutionUnlocked } from './progress.ts';
import type { RunReport, ServerRun } from './result.ts';
import { startServices } from './services/index.ts';
import { startAndProbe } from './start-and-probe.ts';
import { turnsOf } from './steady-turns.ts';
import { Turns } from './turns.ts';
import { UsageError } from './usage-error.ts';
import { honestyProblems, judge, judgedServer, verdictsPass, verdictsTooClose } from './verdict.ts';

export type { BenchEvent, BenchOptions, ServerChoice, ServerSpec } from './bench-options.ts';

/** Whether a reference stage's title may be shown: it names the fix, so only after a pass or once the solution was shown. */
export function stagesRevealed(exercise: Exercise): boolean {
  return solutionUnlocked(exerciseProgress(readProgress().progress, exercise.manifest.id));
}

/** What a reference stage is called before it is revealed. */
export const UNREVEALED_STAGE = 'a reference fix, named once you pass';

/** The server of a choice; a stage's title is shown when `reveal` (default: stagesRevealed). */
export function specFor(exercise: Exercise, choice: ServerChoice, reveal?: boolean): ServerSpec {
  const { manifest } = exercise;
  const make = (role: ServerRun['role'], label: string, title: string, absoluteFile: string, extra: Partial<ServerRun> = {}): ServerSpec => ({
    run: { role, label, title, file: relativeToRoot(absoluteFile), ...extra, nodeFlags: [...(extra.nodeFlags ?? []), ...nodeFlagsComment(absoluteFile)] },
    absoluteFile,
  });
  if (choice === 'broken') return make('broken', 'broken', 'as shipped', exercise.shippedFile);
  if (choice === 'mine') return make('mine', 'mine', 'your server.ts', exercise.serverFile);
  if (choice === 'ceiling') {
    if (!exercise.ceilingFile) throw new UsageError(`exercise ${manifest.id} has no ceiling server`);
    return make('ceiling', 'ceiling', 'bare framework, same payload', exercise.ceilingFile);
  }
  const stage = manifest.stages[choice - 1];
  if (!stage) throw new RangeError(`exercise ${manifest.id} has no stage ${choice}`);
  const title = (reveal ?? stagesRevealed(exercise)) ? stage.title : UNREVEALED_STAGE;
  return make('stage', `stage ${choice}`, title, exercise.stageFile(choice), { stage: choice, nodeFlags: stage.nodeFlags ?? [] });
}

/**
 * Node flags a server file asks for in a comment near its top, so a trainee can set them for their own
 * file: `// node-flags: --max-semi-space-size=64`. Only flags (words starting with --) are taken.
 */
export function nodeFlagsComment(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // a missing file is reported when the server starts
  }
  const line = text.split('\n').slice(0, 30).find((l) => /^\s*\/\/\s*node-flags:/.test(l));
  if (!line) return [];
  const words = line.replace(/^\s*\/\/\s*node-flags:/, '').trim().split(/\s+/).filter(Boolean);
  const bad = words.filter((w) => !/^--[a-z0-9-]+(=\S+)?$/i.test(w));
  if (bad.length > 0) throw new UsageError(`${relativeToRoot(file)}: "// node-flags:" takes Node flags like --max-old-space-size=4096; not: ${bad.join(' ')}`);
  return words;
}

/** The servers `demo` shows: broken, every stage, the ceiling. */
export function demoChoices(exercise: Exercise): ServerChoice[] {
  return ['broken', ...exercise.manifest.stages.map((_, i) => i + 1), ...(exercise.ceilingFile ? ['ceiling' as const] : [])];
}

/**
 * The servers `verify --stretch` needs: the references the stretch stage's targets name (the stage before
 * it for 'previous') and the trainee's file, held to that stage's targets.
 */
export function stretchSpecs(exercise: Exercise, stretch: number): ServerSpec[] {
  const against = new Set(exercise.manifest.stages[stretch - 1]!.targets.map((t) => t.against));
  const choices: ServerChoice[] = [];
  if (against.has('broken') || (against.has('previous') && stretch === 1)) choices.push('broken');
  if (against.has('previous') && stretch > 1) choices.push(stretch - 1);
  if (against.has('ceiling')) choices.push('ceiling');
  const references = choices.map((choice) => specFor(exercise, choice)).map((spec) => (spec.run.role === 'stage' ? { ...spec, run: { ...spec.run, referenceOnly: true } } : spec));
  const mine = specFor(exercise, 'mine');
  return [...references, { ...mine, run: { ...mine.run, stretch } }];
}

/** The servers `verify` needs: the trainee's file and the references its goal names. */
export function verifyChoices(exercise: Exercise): ServerChoice[] {
  const against = new Set(exercise.manifest.goal.map((t) => t.against));
  return [...(against.has('broken') ? ['broken' as const] : []), 'mine', ...(against.has('ceiling') ? ['ceiling' as const] : [])];
}

/** How much longer the first of servers loaded one after another warms up (see runBench). */
const FIRST_WARMUP_EXTRA_SECONDS = 5;

function withLongerWarmup(exercise: Exercise, extraSeconds: number): Exercise {
  const { load } = exercise.manifest;
  return { ...exercise, manifest: { ...exercise.manifest, load: { ...load, warmupSeconds: load.warmupSeconds + extraSeconds } } };
}

export async function runBench(exercise: Exercise, specs: ServerSpec[], options: BenchOptions = {}): Promise<RunReport> {
  const startedAt = new Date().toISOString();
  const runs: ServerRun[] = [];
  const wanted = exercise.manifest.services ?? [];
  if (wanted.length > 0) options.onEvent?.({ type: 'services', names: wanted.map((service) => service.name) });
  // In turns the servers run at the same time: each gets services of its own (see measureInTurns).
  const turning = inTurns(exercise, options);
  const services = await startServices(turning ? [] : wanted);
  let turns: RunReport['turns'];
  try {
    if (turning) {
      const measured = await measureInTurns(exercise, specs, options);
      runs.push(...measured.runs);
      const { seconds, maxRounds, brokenRounds } = turnsOf(exercise.manifest.load);
      turns = {
        rounds: measured.rounds,
        seconds,
        maxRounds,
        ...(brokenRounds < measured.rounds ? { brokenRounds } : {}),
        ...(measured.moreRoundsFor.length > 0 ? { moreRoundsFor: measured.moreRoundsFor } : {}),
      };
    } else if (sideBySide(exercise, specs, options)) {
      // Ramped servers run side by side and take turns at the machine, step by step (see turns.ts).
      const turns = new Turns(specs.length);
      const measured = specs.map(async (spec, index) => {
        const starting = () => options.onEvent?.({ type: 'starting', label: spec.run.label, index, of: specs.length });
        const run = await measureServer(exercise, spec, services, options, turns, starting).finally(() => turns.leave());
        options.onEvent?.({ type: 'done', run });
        return run;
      });
      runs.push(...(await Promise.all(measured)));
    } else {
      // Starting and probing put no load on the machine to speak of: all servers at once, then each is
      // loaded alone, one after another.
      const started = await Promise.all(
        specs.map((spec, index) => {
          options.onEvent?.({ type: 'starting', label: spec.run.label, index, of: specs.length });
          return startAndProbe(exercise, spec, services, options);
        }),
      );
      try {
        for (const [index, entry] of started.entries()) {
          // The first server loaded also warms the services they share (02's s3rver, in its own process,
          // starts cold): it gets a longer warm-up, so that it is not measured on a machine the others never see.
          const warmer = index === 0 && started.length > 1 ? withLongerWarmup(exercise, FIRST_WARMUP_EXTRA_SECONDS) : exercise;
          const run = entry.server ? await measureStarted(warmer, entry, options) : entry.run;
          runs.push(run);
          options.onEvent?.({ type: 'done', run });
        }
      } finally {
        await Promise.all(started.map((entry) => entry.server?.stop()));
      }
    }
  } finally {
    await services.stop();
  }
  const judging = options.judge !== false && !options.checkOnly;
  if (judging) judgeBeforeListening(runs, judgedServer);
  const verdicts = judging ? judge(exercise.manifest, runs) : [];
  const clean = runs.every((run) =>
    options.checkOnly ? !run.failure && (run.check?.ok ?? true) : honestyProblems(run).length === 0,
  );
  return {
    exercise: { id: exercise.manifest.id, title: exercise.manifest.title },
    node: process.version,
    startedAt,
    load: exercise.manifest.load,
    servers: runs,
    verdicts,
    pass: judging ? verdictsPass(verdicts) : clean,
    ...(judging && verdictsTooClose(verdicts) ? { tooClose: true } : {}),
    ...(turns ? { turns } : {}),
  };
}

/**
 * Whether the servers are measured in turns (steady-turns.ts): the exercise's steady load, judged. A plain
 * `run --load`, a ramp and a soak load one server as they always did.
 */
export function inTurns(exercise: Exercise, options: BenchOptions): boolean {
  return !options.checkOnly && !options.measure && options.judge !== false && exercise.manifest.load.turns !== false;
}

/**
 * Whether the servers run side by side, taking turns step by step: when they are ramped (the machine's speed
 * drifts over the minutes a ramp takes; knees measured one server after another compare two machines).
 */
export function sideBySide(exercise: Exercise, specs: ServerSpec[], options: BenchOptions): boolean {
  if (specs.length < 2 || options.checkOnly || options.measure?.kind === 'soak') return false;
  return options.measure?.kind === 'ramp' || exercise.manifest.load.ramp !== undefined;
}
