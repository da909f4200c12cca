// The typed manifest every exercise declares in its exercise.ts, and its validation. Services and metrics
// are values the manifest brings (service.ts, metric.ts): the harness keeps no list of them.
import type { AnsweredBy, AnsweredId } from './answer-timeline.ts';
import type { Kind } from './doctor/kinds.ts';
import type { CheckResult } from './check.ts';
import { loadProblems, type LoadProfile } from './load-profile.ts';
import type { Metric, MetricInputs } from './metric.ts';
import type { Reference, TargetRecord } from './result.ts';
import type { Service, ServiceContexts } from './service.ts';

export { DEFAULT_TURNS } from './load-profile.ts';
export type { LoadProfile, RampProfile } from './load-profile.ts';
export type { Metric } from './metric.ts';
export type { Reference } from './result.ts';
export type { Service, ServiceContexts } from './service.ts';

/** A ratio measured in the same run: value(server) / value(reference) must be at least or at most `ratio`. */
export interface Target {
  /** The figure, a value (metrics/ has the workshop's own; a manifest may define its own, see metric.ts). */
  metric: Metric;
  against: Reference;
  atLeast?: number;
  atMost?: number;
  /**
   * A target that only means something with this many cores for the server (a fix that spreads work
   * over cores): with fewer available (`os.availableParallelism()`, which honours `taskset`), it is not
   * judged, and the verdict says why in `why`.
   */
  needsCores?: { count: number; why: string };
  /**
   * For a floor the work must keep rather than a speed to reach: what a miss means, said in place of
   * "not reached the target yet" when this target is missed.
   */
  whenMissed?: string;
}

/** One answer the load received, kept for the contract check (see answers.ts). Header names are lower case. */
export interface AnswerSample {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Date.now() when it arrived: timestamps in the body are compared with it. */
  receivedAt: number;
  /** Date.now() when its request went out (receivedAt less its response time); unknown for a sample kept without it. */
  sentAt?: number;
  /**
   * The answer that arrived right after the sample before it (each sampling moment keeps two): what a
   * server shares between answers for less than the sampling interval shows between the two.
   */
  follows?: boolean;
  /** The id its request asked with, when the load's path has one (`[<id>]`, LoadProfile.path). */
  id?: string;
}

/**
 * What every answer to the exercise's load must be, checked on a steady sample of the answers the load
 * receives (two every 50 ms per server: about 40 a second) after each server's turns: what a client relies on (status,
 * Content-Type, size, shape, a timestamp close to the answer).
 */
export interface AnswerContract {
  /**
   * The ways one answer breaks the contract, in words; empty when it keeps it. `services` holds the
   * server's own services, for an answer that must match what they published while it was asked (06).
   */
  check(answer: AnswerSample, context: { services: ServiceContexts }): string[];
  /** Where every answer must carry fresh data: a key that must not repeat among the sampled answers. */
  distinct?(answer: AnswerSample): string | undefined;
  /** What the key is, for the failure ("the seed data"). */
  distinctWhat?: string;
  /**
   * Data drawn at random for every answer (01's seed, as hex): no sampled answer's may agree with one of
   * the few before it in more than a quarter of the positions compared, where random hex agrees in a
   * sixteenth. `what` names it.
   */
  random?: { value(answer: AnswerSample): string | undefined; what: string };
  /**
   * A value that changes from answer to answer, though it may repeat now and then (01's ETag: answers
   * served at the same moment may share one): when fewer than half of at least 10 sampled answers'
   * values differ, each answer that repeats an earlier one breaks the contract. With `distinct`, the pairs
   * too (a steady sample and the answer after it): when more than a third of at least 10 pairs whose data
   * differ share the value, each of those breaks it (a value refreshed faster than the samples come).
   * `what` names it.
   */
  changes?: { value(answer: AnswerSample): string | undefined; what: string };
  /**
   * A key read from every answer of the load, not only the sampled ones (a slice of the body, no parsing:
   * it runs beside the load generator): a copy of an earlier answer sent to another request some
   * milliseconds later is never in the same sample as its original. More than one answer in a hundred
   * whose key repeats an earlier one's breaks the contract. `what` names it.
   */
  everyAnswer?: { key(body: string): string | undefined; what: string };
}

/** What a correctness probe gets besides the server's URL: each service's context, as `services.get(theService)`. */
export interface CheckContext {
  services: ServiceContexts;
  /**
   * Set for the probe after the load, and for the after-load check. A service that imitates a remote's
   * delay may drop it then, so that the checks wait for a backlog to arrive, not for it to drain slowly.
   */
  loadOver?: boolean;
  /** After the load: the median latency its answers had (ms; the median of its turns'), when it was measured. */
  loadP50Ms?: number;
}

/** What the after-load check gets: the services, and what the load and the probes asked of the server. */
export interface AfterLoadContext extends CheckContext {
  baseUrl: string;
  /** 2xx answers of the load, warm-ups included (requests still in flight when a phase stopped are not counted). */
  answered: number;
  /**
   * The same answers by the time they arrived, counted from the load's first phase, in steps of 100 ms:
   * work an answer promised can be held to a deadline from it. Only the warm-ups, measured phase and turns
   * are timed (not a ramp, a soak, or the seconds beside a fresh copy); an answer left out can only make
   * such a check more lenient, as its work still arrives.
   */
  answeredBy: AnsweredBy[];
  /**
   * When the load's path has an id (`[<id>]`): each of those answers with its request's id and when it
   * arrived (ms since the epoch), over the same phases: work an answer promised can be held to a
   * deadline one answer at a time.
   */
  answeredIds: AnsweredId[];
  /** 2xx answers the correctness probe got from this server, before the load and after it. */
  probeAnswers: number;
  /**
   * The most requests the load may have left in flight as its phases ended (warm-up, each turn, each
   * second beside a fresh copy: a connection's request each): served, so they did work, but not counted.
   */
  inFlightAtMost: number;
  connections: number;
  /**
   * Stops the server the way an orchestrator does, with SIGTERM, and waits up to 10 s for it to exit
   * (then SIGKILL): for checks on a graceful stop, such as a queue flushed before exit.
   */
  stopServer(): Promise<{ code: number | null; signal: string | null }>;
}

export interface Stage {
  /** File name in solutions/<id>/, named for what it changes: 1-fix-the-guard.ts. */
  file: string;
  title: string;
  /** What this stage changes and why, shown by `workshop solution`. */
  changes: string;
  targets: Target[];
  nodeFlags?: string[];
  /**
   * The Node major versions on which this stage's targets are known to hold, when not all of them: a
   * runtime flag's effect can change with V8. Elsewhere the stage is still run and shown, marked with
   * `otherVersions`, the measured reason, and the author check does not hold it to its targets.
   */
  nodeMajors?: number[];
  otherVersions?: string;
  /**
   * A stage shown on purpose although it is wrong: fast, but rejected by the probe or the after-load
   * check with a failure that contains `problem` (e.g. a cache that never expires). `why` says what it
   * teaches. Its speed targets must still hold; the author check asserts both.
   */
  expectedToFail?: { why: string; problem: string };
}

export interface ExerciseManifest {
  /** The folder name, NN-slug. */
  id: string;
  title: string;
  caseStudy: { company: string; article: string; source: string };
  /** The trainee's file, relative to the exercise folder. */
  serverFile: string;
  /** The shipped broken server, relative to solutions/<id>/; `reset` restores it. */
  shippedFile: string;
  /**
   * The bare framework serving the same payload on the same write path, relative to the exercise folder.
   * Left out where no such server means anything (a worker whose cost is its own work).
   */
  ceilingFile?: string;
  /**
   * The services the harness starts before the servers and stops after them (services/ has the
   * workshop's own: S3, a log file, a broker, StatsD with its DNS, a route table). Each server gets fresh
   * state from them and the environment that points at it; its probes get their contexts.
   */
  services?: Service[];
  /**
   * Opt-in probe figures that cost something to collect. asyncResources: live async resources by type
   * (async_hooks). sampleMs: how often the probe samples (default 1000): a heap's slope within a turn of a
   * few seconds needs several samples a second.
   */
  probe?: { asyncResources?: boolean; sampleMs?: number };
  load: LoadProfile;
  /**
   * What every answer under load must be (see AnswerContract). The correctness probe runs again after
   * the load as well, while the server still runs.
   */
  contract: AnswerContract;
  /** The ceiling's contract, when it serves the payload without the exercise's extras. */
  ceilingContract?: AnswerContract;
  /** Rejects fast-but-wrong servers. Runs against a listening server before any load, and again after it. */
  check(baseUrl: string, context: CheckContext): Promise<CheckResult>;
  /** A cheaper check for the ceiling, which serves the payload but none of the exercise's extras. */
  ceilingCheck?(baseUrl: string, context: CheckContext): Promise<CheckResult>;
  /** Runs after the load, while the server still runs: what only shows after work, e.g. no upload lost. */
  afterLoad?(context: AfterLoadContext): Promise<CheckResult>;
  /**
   * How many pieces of the work a server hands to its services its services have seen finished so far (02:
   * payloads stored in the server's bucket). Read as the measured phase starts and as it ends; the run
   * keeps the difference (ServerRun.finishedWork), which backlogGrowth sets against the answers. Read
   * around one measured phase, so only with load.turns: false.
   */
  finishedWork?(services: ServiceContexts): Promise<number>;
  stages: Stage[];
  /** What the trainee's own file must reach to pass. 'previous' has no meaning here. */
  goal: Target[];
  /**
   * What the shipped server must show of the bug, judged against 'itself' (e.g. latencyCliff at least
   * 10: its p99 past the knee is ten times its low-load p99). Shown in the report; the author check asserts it.
   */
  symptom?: Target[];
  hints: string[];
  /**
   * For `workshop profile`: lookFor is one paragraph (2-4 sentences) on what the profile of the shipped
   * server shows of the bug: the frames or figures to find, and the tool (flame, doctor, heap, cpu) that
   * shows them best. Printed after the profile is written, and shown at the top of the cpu flame graph.
   */
  profile?: { lookFor: string; frames?: FrameClaim[] };
  /**
   * What `workshop doctor` names, checked by test/diagnosis.test.ts (npm run test:diagnosis, Node 20 and
   * 24): `shipped`, the kind of the bug, among the shipped server's findings; `final`, the kinds the last
   * stage may still show (none, or smaller ones), with `why` when there are any. `shipped` itself only
   * where the fixed server is short of the same thing under the same load (03's CPU); the test then wants
   * the figure that finding rests on to have fallen by a third.
   */
  doctor?: { shipped: Kind; final: Kind[]; why?: string };
}

/**
 * A frame that `lookFor` names, as `profile --tool cpu` shows it for the shipped server: at least
 * `atLeast` of all samples in it and below it, summed over its call paths (a frame under another match
 * is not counted twice). test/diagnosis.test.ts checks each claim on Node 20 and 24.
 */
export interface FrameClaim {
  /** The function's name as the profile shows it: "sha512Hex", "(garbage collector)", "(idle)". */
  name?: string;
  /** Part of the frame's file, when the name alone is not enough, or alone for a whole package: "node_modules/bfj/". */
  file?: string;
  /** The least share of all samples, 0 to 1: set below the lowest share measured on Node 20 and 24. */
  atLeast: number;
}

/**
 * What an exercise's own exercise.ts declares, in the trainee's folder: the story's source, the files,
 * the services, the load, the contract and the goal. Nothing in it names the fix.
 */
export type ExerciseDeclaration = Omit<ExerciseManifest, 'stages' | 'hints' | 'profile' | 'doctor'>;

/**
 * What solutions/<id>/stages.ts declares, beside the reference stages it names: the stages with their
 * targets and prose, the hints (the last ones name the fix) and what a profile shows of the bug.
 */
export type SolutionDeclaration = Pick<ExerciseManifest, 'stages' | 'hints' | 'profile' | 'doctor'>;

export function defineExercise<T extends ExerciseDeclaration>(declaration: T): T {
  return declaration;
}

export function defineSolution(declaration: SolutionDeclaration): SolutionDeclaration {
  return declaration;
}

/** Every problem with a manifest, in words; empty when it is sound. */
export function validateManifest(manifest: ExerciseManifest): string[] {
  const problems: string[] = [];
  if (!/^\d{2}-[a-z0-9-]+$/.test(manifest.id)) problems.push(`id "${manifest.id}" must look like 01-some-slug`);
  if (!manifest.title.trim()) problems.push('title is empty');
  problems.push(...loadProblems(manifest.load));
  if (manifest.stages.length === 0) problems.push('there must be at least one stage');
  if (manifest.hints.length === 0) problems.push('there must be at least one hint');
  if (manifest.goal.length === 0) problems.push('goal must have at least one target');
  const targets = [...manifest.goal, ...manifest.stages.flatMap((s) => s.targets)];
  if (!manifest.ceilingFile && targets.some((t) => t.against === 'ceiling')) {
    problems.push('a target is set against the ceiling, but there is no ceilingFile');
  }
  if (targets.some((t) => t.against === 'baseline')) problems.push("a target is set against 'baseline', which only `workshop measure` has: an exercise compares with 'broken'");

  const files = new Set<string>();
  manifest.stages.forEach((stage, index) => {
    const where = `stage ${index + 1}`;
    if (!new RegExp(`^${index + 1}-[a-z0-9-]+\\.ts$`).test(stage.file)) {
      problems.push(`${where}: file "${stage.file}" must be named ${index + 1}-<what-changes>.ts`);
    }
    if (files.has(stage.file)) problems.push(`${where}: file "${stage.file}" is used twice`);
    files.add(stage.file);
    if (stage.targets.length === 0) problems.push(`${where}: has no target`);
    if (stage.nodeMajors && !stage.otherVersions) problems.push(`${where}: nodeMajors needs otherVersions, the reason it does not hold elsewhere`);
    for (const target of stage.targets) problems.push(...targetProblems(target, where));
  });
  for (const claim of manifest.profile?.frames ?? []) {
    if (!claim.name && !claim.file) problems.push('profile.frames: a claim names a frame by name, file or both');
    if (!(claim.atLeast > 0 && claim.atLeast < 1)) problems.push(`profile.frames: ${claim.name ?? claim.file}: atLeast is a share between 0 and 1`);
  }
  for (const target of manifest.symptom ?? []) {
    problems.push(...targetProblems(target, 'symptom'));
    if (target.against !== 'itself') problems.push("symptom: a target on the shipped server is judged against 'itself'");
  }
  if (typeof manifest.contract?.check !== 'function') problems.push('contract.check is missing: what every answer under load must be');
  problems.push(...metricNeeds([...targets, ...(manifest.symptom ?? [])], manifest.load, { finishedWork: manifest.finishedWork !== undefined }));
  if (manifest.finishedWork && manifest.load.turns !== false) problems.push('finishedWork is read around one measured phase: it needs load.turns: false');
  for (const target of manifest.goal) {
    problems.push(...targetProblems(target, 'goal'));
    if (target.against === 'previous') problems.push('goal: a target against "previous" has no meaning for the trainee\'s file');
  }
  return problems;
}

/** What the load (or the manifest) lacks for the targets' metrics to be read (a fresh copy, a ramp), once per metric. */
export function metricNeeds(targets: Target[], load: LoadProfile, has: MetricInputs = { finishedWork: false }): string[] {
  const metrics = new Set(targets.map((t) => t.metric));
  return [...metrics].map((metric) => metric.needs?.(load, has)).filter((need) => need !== undefined);
}

/** The problems of one target, `where` naming it in each ("stage 2", "goal"). */
export function targetProblems(target: Target, where: string): string[] {
  const problems: string[] = [];
  const metric = target.metric as Metric | undefined;
  if (!(metric && typeof metric.read === 'function' && typeof metric.format === 'function')) {
    return [`${where}: a target's metric is a value with read and format (see scripts/metric.ts), not ${JSON.stringify(metric)}`];
  }
  const bounds = [target.atLeast, target.atMost].filter((b) => b !== undefined);
  if (bounds.length !== 1) problems.push(`${where}: a target needs exactly one of atLeast or atMost`);
  if (bounds.some((b) => !(typeof b === 'number' && b > 0 && Number.isFinite(b)))) {
    problems.push(`${where}: a target's ratio must be a positive number`);
  }
  if (target.against === 'itself' && metric.judged !== 'itself') {
    problems.push(`${where}: ${metric.id} is not a ratio of the server's own figures: it cannot be judged against 'itself'`);
  }
  return problems;
}

/** A target as a result keeps it: its metric by id, so that the result is plain data (JSON, IPC). */
export function targetRecord(target: Target): TargetRecord {
  return { ...target, metric: target.metric.id };
}

/** Whether a stage's targets are expected to hold on the running Node (see Stage.nodeMajors). */
export function stageHoldsHere(stage: Stage, version = process.versions.node): boolean {
  return !stage.nodeMajors || stage.nodeMajors.includes(Number(version.split('.')[0]));
}
