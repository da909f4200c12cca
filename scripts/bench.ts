// Runs a set of servers of one exercise one after another, each in its own process: start, correctness
// probe, load (warm-up then measured) with the probe's figures, stop. Then judges them. Used by verify,
// demo, run --load and the author check, so they all measure the same way.
import { readFileSync } from 'node:fs';
import type { Exercise } from './exercises.ts';
import { AnswerSampler, checkAnswers } from './answers.ts';
import { probeAnswers, runCheck } from './check.ts';
import { waitUntilIdle } from './idle.ts';
import { runLoad, runWarmup, type LoadProgress } from './load.ts';
import type { LoadProfile, RampProfile } from './manifest.ts';
import { compareWithFreshCopy } from './fresh-copy.ts';
import { runRamp } from './ramp.ts';
import { runSoak, type SoakOptions } from './soak.ts';
import { relativeToRoot } from './paths.ts';
import type { FreshCopyResult, RunReport, ServerRun } from './result.ts';
import { ServerStartError, startServer, type RunningServer, type StartOptions } from './server-process.ts';
import { startServices, type ServiceContexts, type Services } from './services/index.ts';
import { combineHeap, combineRuntime, combineTurns, loadInTurns, turnLoad, turnsOf, warmUpInTurns, type Contender } from './steady-turns.ts';
import { ALONE, Turns, type TurnTaker } from './turns.ts';
import { heapTrend } from './trend.ts';
import { UsageError } from './usage-error.ts';
import { anyTooClose, honestyProblems, judge, verdictsPass, verdictsTooClose } from './verdict.ts';

/** How long a server may take to stop after SIGTERM when an after-load check asks for a graceful stop. */
const GRACEFUL_STOP_MS = 10_000;

export type ServerChoice = 'broken' | 'mine' | 'ceiling' | number;

export interface ServerSpec {
  run: Omit<ServerRun, 'check' | 'load' | 'runtime' | 'failure' | 'output'>;
  absoluteFile: string;
}

export type BenchEvent =
  | { type: 'services'; names: string[] }
  | { type: 'starting'; label: string; index: number; of: number }
  | { type: 'checked'; label: string; ok: boolean }
  | { type: 'after-load'; label: string }
  | { type: 'load'; label: string; progress: LoadProgress }
  | { type: 'done'; run: ServerRun }
  /** Before each run of `--runs N`. */
  | { type: 'repeat'; index: number; of: number };

export interface BenchOptions {
  /** Only start each server and run the correctness probe: no load. */
  checkOnly?: boolean;
  /** Judge the stages and the trainee's file against their targets (default). Off for a plain `run --load`. */
  judge?: boolean;
  extraNodeFlags?: string[];
  onEvent?: (event: BenchEvent) => void;
  /**
   * How to load each server: the manifest's load (default: steady, or its ramp when it has one), a ramp
   * (`run --ramp`), or a soak (`run --soak`). The warm-up always comes first.
   */
  measure?: { kind: 'ramp'; ramp: RampRequest } | { kind: 'soak'; soak: SoakOptions };
}

/** What `run --ramp` asks for; the rest comes from the exercise's ramp, or from what the warm-up reached. */
export interface RampRequest {
  from?: number;
  to?: number;
  /** Sets the number of the climb's rates: one per step's seconds of this (`--over`). */
  seconds?: number;
}

const DEFAULT_STEP_SECONDS = 2;
const DEFAULT_STEPS = 10;

/**
 * The ramp to run: the request over the exercise's own ramp. An exercise without one is ramped from 10% to
 * 200% of the rate its warm-up reached at full load (`warmupRate`), so the knee falls inside.
 */
export function resolveRamp(request: RampRequest, base: RampProfile | undefined, warmupRate?: number): RampProfile {
  const stepSeconds = base?.stepSeconds ?? DEFAULT_STEP_SECONDS;
  const steps = request.seconds !== undefined ? Math.max(2, Math.round(request.seconds / stepSeconds)) : (base?.steps ?? DEFAULT_STEPS);
  const reached = Math.max(10, Math.round(warmupRate ?? 0));
  const from = request.from ?? base?.from ?? Math.max(1, Math.round(reached * 0.1));
  // The warm-up runs on a cold JIT, so the server's top rate is usually above what it reached there.
  const to = request.to ?? base?.to ?? Math.max(from + steps, Math.round(reached * 2));
  return { from, to: Math.max(to, from + 1), steps, stepSeconds };
}

export function specFor(exercise: Exercise, choice: ServerChoice): ServerSpec {
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
  return make('stage', `stage ${choice}`, stage.title, exercise.stageFile(choice), { stage: choice, nodeFlags: stage.nodeFlags ?? [] });
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

/** The servers `verify` needs: the trainee's file and the references its goal names. */
export function verifyChoices(exercise: Exercise): ServerChoice[] {
  const against = new Set(exercise.manifest.goal.map((t) => t.against));
  return [...(against.has('broken') ? ['broken' as const] : []), 'mine', ...(against.has('ceiling') ? ['ceiling' as const] : [])];
}

export async function runBench(exercise: Exercise, specs: ServerSpec[], options: BenchOptions = {}): Promise<RunReport> {
  const startedAt = new Date().toISOString();
  const runs: ServerRun[] = [];
  const requests = exercise.manifest.services ?? [];
  if (requests.length > 0) options.onEvent?.({ type: 'services', names: requests.map((r) => r.kind) });
  // In turns the servers run at the same time: each gets services of its own (see measureInTurns).
  const turning = inTurns(exercise, options);
  const services = await startServices(turning ? [] : requests);
  let turns: RunReport['turns'];
  try {
    if (turning) {
      const measured = await measureInTurns(exercise, specs, options);
      runs.push(...measured.runs);
      const { seconds, maxRounds } = turnsOf(exercise.manifest.load);
      turns = { rounds: measured.rounds, seconds, maxRounds };
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
      for (const [index, spec] of specs.entries()) {
        options.onEvent?.({ type: 'starting', label: spec.run.label, index, of: specs.length });
        const run = await measureServer(exercise, spec, services, options);
        runs.push(run);
        options.onEvent?.({ type: 'done', run });
      }
    }
  } finally {
    await services.stop();
  }
  const judging = options.judge !== false && !options.checkOnly;
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

interface Started {
  run: ServerRun;
  server?: RunningServer;
  contexts?: ServiceContexts;
  startOptions?: StartOptions;
  /** probeAnswers() of the server's URL when it started (a later server may reuse a port). */
  probedFrom?: number;
}

/** A server in turns, with what its after-load checks need: its services, how to start a copy of it. */
type InTurns = Contender & { contexts: ServiceContexts; file: string; startOptions: StartOptions; probedFrom: number };

/** Starts one server and runs the correctness probe; the server is left running only when it passed. */
async function startAndProbe(exercise: Exercise, spec: ServerSpec, services: Services, options: BenchOptions): Promise<Started> {
  const { manifest } = exercise;
  const nodeFlags = [...spec.run.nodeFlags, ...(options.extraNodeFlags ?? [])];
  const run: ServerRun = { ...spec.run, nodeFlags };
  const { env, contexts } = await services.prepare();
  probeEnv(manifest, env);
  let server: RunningServer;
  const startOptions = { nodeFlags, env };
  try {
    server = await startServer(spec.absoluteFile, startOptions);
  } catch (error) {
    return { run: withFailure(run, error) };
  }
  const probedFrom = probeAnswers(server.url);
  const probe = run.role === 'ceiling' ? manifest.ceilingCheck : manifest.check;
  if (probe) {
    run.check = await runCheck((url) => probe(url, { services: contexts }), server.url);
    options.onEvent?.({ type: 'checked', label: run.label, ok: run.check.ok });
    if (!run.check.ok) {
      const exit = await Promise.race([server.exited, new Promise<undefined>((resolve) => setTimeout(resolve, 300))]);
      if (exit && !exit.expected) noteCrash(run, server, 'while it answered the correctness probe');
      await server.stop();
      return { run };
    }
  }
  return { run, server, contexts, startOptions, probedFrom };
}

/**
 * The steady load with the servers in turns: each started and probed, warmed up in turn, then loaded in
 * rounds (steady-turns.ts); then, one server at a time, what is judged after the load: the fresh copy,
 * the after-load check, the probe again, and the answers the load received held to the contract.
 */
async function measureInTurns(exercise: Exercise, specs: ServerSpec[], options: BenchOptions): Promise<{ runs: ServerRun[]; rounds: number }> {
  const { manifest } = exercise;
  const runs: ServerRun[] = [];
  const contenders: InTurns[] = [];
  // Servers in turns run at the same time: a shared service (a DNS server's answer rate, a broker's queue)
  // would carry one server's backlog into another's turn, so each server gets services of its own.
  const serviceSets: Services[] = [];
  let rounds = 0;
  try {
    // Starting and probing put no load on the machine to speak of: all servers at once.
    const started = await Promise.all(
      specs.map(async (spec, index) => {
        options.onEvent?.({ type: 'starting', label: spec.run.label, index, of: specs.length });
        const services = await startServices(manifest.services ?? []);
        serviceSets.push(services);
        return { spec, ...(await startAndProbe(exercise, spec, services, options)) };
      }),
    );
    for (const { spec, run, server, contexts, startOptions, probedFrom } of started) {
      runs.push(run);
      if (server) contenders.push({ run, server, contexts: contexts!, file: spec.absoluteFile, startOptions: startOptions!, probedFrom: probedFrom!, sampler: new AnswerSampler() });
    }
    const onProgress = (label: string, progress: LoadProgress) => options.onEvent?.({ type: 'load', label, progress });
    const warmedUp = await warmUpInTurns(contenders, manifest.load, onProgress);
    const settle = () => {
      contenders.forEach((c, i) => {
        const turns = c.run.turns ?? [];
        c.run.load = combineTurns(turns, warmedUp[i]!);
        c.run.runtime = combineRuntime(turns.map((t) => t.runtime).filter((r) => r !== undefined));
        c.run.heap = combineHeap(turns);
      });
    };
    rounds = await loadInTurns(contenders, manifest.load, {
      decided: () => {
        settle();
        return !anyTooClose(manifest, runs);
      },
      onProgress,
      onCrash: ({ run, server }) => noteCrash(run, server, 'during its turn'),
    });
    settle();
    // A fresh copy beside each server is load: one server at a time. The checks after it are not: all at once.
    for (const contender of contenders) {
      if (!contender.server.exit()) await beside(exercise, contender, (progress) => onProgress(contender.run.label, progress));
    }
    await Promise.all(
      contenders.map(async (contender) => {
        const { run, server, sampler } = contender;
        if (!server.exit()) await afterTurns(exercise, contender, options);
        run.answers = checkAnswers(run.role === 'ceiling' ? (manifest.ceilingContract ?? manifest.contract) : manifest.contract, sampler.samples);
        await server.stop();
        options.onEvent?.({ type: 'done', run });
      }),
    );
  } finally {
    await Promise.all(contenders.map((c) => c.server.stop()));
    for (const services of serviceSets) await services.stop();
  }
  return { runs, rounds };
}

/** For throughputKept: the aged server beside a fresh copy of itself, when it is held to that target. */
async function beside(exercise: Exercise, { run, server, file, startOptions }: InTurns, onProgress: (progress: LoadProgress) => void): Promise<void> {
  const freshCopy = exercise.manifest.load.freshCopy;
  if (!freshCopy || !judgedServer(run)) return;
  try {
    run.freshCopy = await besideFreshCopy(file, startOptions, server, exercise.manifest.load, freshCopy.pairs, onProgress);
    if (server.exit()) noteCrash(run, server, 'beside its fresh copy');
  } catch (error) {
    Object.assign(run, withFailure(run, error, server.output()));
  }
}

/** What is judged after the load, while the server still runs: the probe again, the after-load check. */
async function afterTurns(exercise: Exercise, { run, server, contexts, probedFrom }: InTurns, options: BenchOptions): Promise<void> {
  const { manifest } = exercise;
  try {
    if (manifest.load.settleAfterWarmup) await waitUntilIdle(server);
    // The probe again, for a server that is judged: a reference's answers under load are checked, but
    // its probe after the load would wait out the backlog that is its bug (02's uploads: 20 s).
    if (judgedServer(run)) run.checkAfterLoad = await runCheck((url) => manifest.check(url, { services: contexts }), server.url);
    if (manifest.afterLoad && judgedServer(run) && run.load) {
      options.onEvent?.({ type: 'after-load', label: run.label });
      const stopServer = async () => {
        const { code, signal } = await server.stop(GRACEFUL_STOP_MS);
        return { code, signal };
      };
      const phases = 1 + (run.turns?.length ?? 0) + 2 * (run.freshCopy?.aged.length ?? 0);
      const context = {
        services: contexts,
        baseUrl: server.url,
        answered: run.load.answered,
        probeAnswers: probeAnswers(server.url) - probedFrom,
        inFlightAtMost: phases * turnLoad(manifest.load).connections,
        connections: manifest.load.connections,
        stopServer,
      };
      run.afterLoad = await runCheck(() => manifest.afterLoad!(context), server.url);
    }
    if (server.exit()) noteCrash(run, server, 'after the load');
  } catch (error) {
    Object.assign(run, withFailure(run, error, server.output()));
  }
}

/** Servers measured side by side (`turns`) put load on the machine only in their turn; `starting` is called in the first. */
async function measureServer(
  exercise: Exercise,
  spec: ServerSpec,
  services: Services,
  options: BenchOptions,
  turns: TurnTaker = ALONE,
  starting: () => void = () => {},
): Promise<ServerRun> {
  const { manifest } = exercise;
  const nodeFlags = [...spec.run.nodeFlags, ...(options.extraNodeFlags ?? [])];
  const run: ServerRun = { ...spec.run, nodeFlags };
  let server: RunningServer;
  const { env, contexts } = await services.prepare();
  probeEnv(manifest, env);
  try {
    server = await turns.take(async () => {
      starting();
      return startServer(spec.absoluteFile, { nodeFlags, env });
    });
  } catch (error) {
    return withFailure(run, error);
  }
  const probedFrom = probeAnswers(server.url);
  try {
    const probe = run.role === 'ceiling' ? manifest.ceilingCheck : manifest.check;
    if (probe) {
      run.check = await turns.take(() => runCheck((url) => probe(url, { services: contexts }), server.url));
      options.onEvent?.({ type: 'checked', label: run.label, ok: run.check.ok });
      if (!run.check.ok) {
        // A probe that failed because the server died should say so, with what it printed.
        const exit = await Promise.race([server.exited, new Promise<undefined>((resolve) => setTimeout(resolve, 300))]);
        if (exit && !exit.expected) noteCrash(run, server, 'while it answered the correctness probe');
        return run;
      }
    }
    if (options.checkOnly) return run;
    const sampler = new AnswerSampler();
    let measuredFrom = 0;
    const onProgress = (progress: LoadProgress) => options.onEvent?.({ type: 'load', label: run.label, progress });
    const beforeMeasured = async () => {
      if (manifest.load.settleAfterWarmup) await waitUntilIdle(server);
      server.resetFigures();
      measuredFrom = server.samples.length;
    };
    const request = options.measure?.kind === 'ramp' ? options.measure.ramp : undefined;
    if (options.measure?.kind === 'soak') {
      const warmedUp = await runWarmup(server.url, manifest.load, onProgress);
      await beforeMeasured();
      const soakOptions = { ...options.measure.soak, serverExited: () => server.exit() !== undefined };
      const soaked = await runSoak(server.url, manifest.load, soakOptions, () => server.samples.slice(measuredFrom), onProgress, sampler);
      run.load = { ...soaked.load, answered: soaked.load.answered + warmedUp };
      run.soak = soaked.soak;
    } else if (request || manifest.load.ramp) {
      // Without a ramp of its own, the exercise warms up at full load and the ramp is set from what it reached.
      const own = manifest.load.ramp;
      const fullWarmup = own ? 0 : await turns.take(() => runWarmup(server.url, manifest.load, onProgress));
      const ramp = resolveRamp(request ?? {}, own, fullWarmup / Math.max(1, manifest.load.warmupSeconds));
      const warmedUp = own ? await turns.take(() => runWarmup(server.url, manifest.load, onProgress, ramp.from)) : fullWarmup;
      await beforeMeasured();
      const ramped = await runRamp(server.url, manifest.load, ramp, onProgress, turns);
      run.load = { ...ramped.load, answered: ramped.load.answered + warmedUp };
      run.ramp = ramped.ramp;
    } else {
      run.load = await runLoad(server.url, manifest.load, onProgress, beforeMeasured, sampler);
    }
    run.runtime = await server.snapshot();
    // Samples are taken once a second; the first after the reset may still cover the warm-up.
    // Windows of a quarter of the phase (3 s at most) for the heap's low points, so a short phase has four.
    run.heap = heapTrend(server.samples.slice(measuredFrom + 1), Math.min(3000, (manifest.load.durationSeconds * 1000) / 4));
    if (server.exit()) {
      noteCrash(run, server, 'during the load');
      return run;
    }
    // The fresh copy is for a verdict; a run that is not judged (a plain run, a known-wrong fix) has none.
    const freshCopy = manifest.load.freshCopy;
    if (freshCopy && run.load && !options.measure && options.judge !== false) {
      run.freshCopy = await besideFreshCopy(spec.absoluteFile, { nodeFlags, env }, server, manifest.load, freshCopy.pairs, onProgress);
      if (server.exit()) {
        noteCrash(run, server, 'beside its fresh copy');
        return run;
      }
    }
    if (!request && !manifest.load.ramp) run.answers = checkAnswers(run.role === 'ceiling' ? (manifest.ceilingContract ?? manifest.contract) : manifest.contract, sampler.samples);
    if (judgedServer(run)) {
      if (manifest.load.settleAfterWarmup) await waitUntilIdle(server);
      run.checkAfterLoad = await turns.take(() => runCheck((url) => manifest.check(url, { services: contexts }), server.url));
    }
    if (manifest.afterLoad && judgedServer(run)) {
      const { answered } = run.load;
      options.onEvent?.({ type: 'after-load', label: run.label });
      const stopServer = async () => {
        const { code, signal } = await server.stop(GRACEFUL_STOP_MS);
        return { code, signal };
      };
      const phases = 2 + 2 * (run.freshCopy?.aged.length ?? 0);
      const context = {
        services: contexts,
        baseUrl: server.url,
        answered,
        probeAnswers: probeAnswers(server.url) - probedFrom,
        inFlightAtMost: phases * manifest.load.connections,
        connections: manifest.load.connections,
        stopServer,
      };
      run.afterLoad = await turns.take(() => runCheck(() => manifest.afterLoad!(context), server.url));
      if (server.exit()) noteCrash(run, server, 'after the load');
    }
    return run;
  } catch (error) {
    return withFailure(run, error, server.output());
  } finally {
    await server.stop();
  }
}

/** Starts a fresh copy of the server and loads the two in turns (see fresh-copy.ts); stops the copy. */
async function besideFreshCopy(
  file: string,
  startOptions: StartOptions,
  aged: RunningServer,
  profile: LoadProfile,
  pairs: number,
  onProgress: (progress: LoadProgress) => void,
): Promise<FreshCopyResult> {
  const copy = await startServer(file, startOptions);
  try {
    const result = await compareWithFreshCopy(aged.url, copy.url, profile, pairs, onProgress);
    if (copy.exit()) throw new Error(`the fresh copy of the server crashed (${copy.exit()!.signal ?? `exit code ${copy.exit()!.code}`})\n${copy.output()}`);
    return result;
  } finally {
    await copy.stop();
  }
}

/**
 * Whether the servers run side by side, taking turns step by step: when they are ramped (the machine's speed
 * drifts over the minutes a ramp takes; knees measured one server after another compare two machines).
 */
export function sideBySide(exercise: Exercise, specs: ServerSpec[], options: BenchOptions): boolean {
  if (specs.length < 2 || options.checkOnly || options.measure?.kind === 'soak') return false;
  return options.measure?.kind === 'ramp' || exercise.manifest.load.ramp !== undefined;
}

/** A server held to targets (a stage, the trainee's file), as opposed to a reference it is compared with. */
function judgedServer(run: ServerRun): boolean {
  return run.role === 'stage' || run.role === 'mine';
}

/** What the manifest asks of the injected probe, as its environment. */
function probeEnv(manifest: Exercise['manifest'], env: NodeJS.ProcessEnv): void {
  if (manifest.probe?.asyncResources) env.HOTPATH_ASYNC_RESOURCES = '1';
  if (manifest.probe?.sampleMs) env.HOTPATH_SAMPLE_MS = String(manifest.probe.sampleMs);
}

function noteCrash(run: ServerRun, server: RunningServer, when: string): void {
  const exit = server.exit();
  if (!exit || exit.expected) return;
  run.failure = `the server crashed ${when} (${exit.signal ?? `exit code ${exit.code}`})`;
  run.output = server.output();
}

function withFailure(run: ServerRun, error: unknown, output?: string): ServerRun {
  const message = error instanceof Error ? error.message : String(error);
  const startOutput = error instanceof ServerStartError ? error.output : undefined;
  return { ...run, failure: message, output: startOutput || output || undefined };
}
