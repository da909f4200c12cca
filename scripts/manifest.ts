// The typed manifest every exercise declares in its exercise.ts, and its validation.
import type { Kind } from './doctor/kinds.ts';
import type { CheckResult } from './check.ts';
import type { ServiceContexts } from './services/index.ts';
import type { StatsdOptions } from './services/statsd.ts';
import type { RouteTableOptions } from './services/route-table.ts';

/**
 * What a server is compared with: the shipped broken server, the stage before, or the bare framework; or
 * 'itself' for a metric that already is a ratio of two moments of the same server's run (throughputKept).
 */
export type Reference = 'broken' | 'previous' | 'ceiling' | 'itself';

/**
 * Turns of 1 s, at least 4 rounds: the fewest whose lowest and highest ratio cover the median with the
 * confidence the verdict wants (87.5% for 4, see stats.ts), then more while too close, up to 11.
 */
export const DEFAULT_TURNS = { seconds: 1, minRounds: 4, maxRounds: 11 };

/**
 * A figure of a load run or of the probe that a target can be set on: req/s and p99 from the load,
 * heapGrowth (bytes/s, the slope of the heap's lower envelope over the measured phase) and
 * minorGcShare (the share of wall time spent in scavenges) and minorGcPerRequest (scavenge milliseconds
 * per request answered in the measured phase: the churn's cost per unit of work, which unlike the share
 * does not fall just because a server got slower elsewhere) from the probe.
 * Over time: lateRequestsPerSecond (req/s over the last quarter of the measured phase, the median of its
 * seconds) and throughputKept (what a server keeps of its speed as it ages: its req/s after the measured
 * phase over a fresh copy's, the two loaded in turns; needs load.freshCopy; a ratio already, judged
 * against 'itself').
 * pendingLookups: the peak number of DNS lookups in flight (c-ares QUERYWRAP + getaddrinfo
 * GETADDRINFOREQWRAP) during the measured phase; needs `probe: { asyncResources: true }`.
 * With a ramped load (load.ramp): kneeRate (req/s answered at the knee, the highest offered rate the server
 * kept up with) and latencyCliff (p99 at the ramp's highest step over p99 at its first: a ratio already,
 * judged against 'itself').
 */
export type Metric =
  | 'requestsPerSecond'
  | 'latencyP99'
  | 'heapGrowth'
  | 'minorGcShare'
  | 'minorGcPerRequest'
  | 'lateRequestsPerSecond'
  | 'throughputKept'
  | 'pendingLookups'
  | 'kneeRate'
  | 'latencyCliff';

/** Metrics that are a ratio of the server's own figures, the only ones that may be judged against 'itself'. */
export const SELF_RATIO_METRICS: readonly Metric[] = ['throughputKept', 'latencyCliff'];

/** A ratio measured in the same run: value(server) / value(reference) must be at least or at most `ratio`. */
export interface Target {
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
}

export interface LoadProfile {
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: string;
  headers?: Record<string, string>;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /**
   * Wait after the warm-up until the server's event loop is idle before measuring. autocannon abandons
   * the warm-up's requests still in flight, and a server whose requests take seconds keeps working on
   * them; without the wait the measured phase starts behind that backlog.
   */
  settleAfterWarmup?: boolean;
  /**
   * The steady load's offered rate in req/s over all connections (autocannon's overallRate); as fast as
   * the server answers when absent. The author check's known-wrong fixes use it: they are judged on what
   * they answer, and a load at full speed would only spend the cores they share.
   */
  rate?: number;
  /**
   * Measure with a ramp instead of a steady load: the offered rate climbs from `from` to `to` req/s in
   * `steps` equal steps of `stepSeconds` each (autocannon's rate limiting), and the harness finds the knee.
   * `connections` is then the most requests the load keeps open at once: past the knee, they queue.
   * The warm-up runs at `from` req/s.
   */
  ramp?: RampProfile;
  /**
   * After the measured phase, start a fresh copy of the server, warm it up the same way, and load the two
   * in turns, a second each, `pairs` times: throughputKept is the aged server's median second over the
   * fresh copy's, each second beside one of the other on the same machine (see fresh-copy.ts).
   */
  freshCopy?: { pairs: number };
  /**
   * How the servers of one verdict take turns (see steady-turns.ts): each is loaded for `seconds` in turn,
   * round after round; at least `minRounds` rounds, then more while a target is too close to call, up to
   * `maxRounds`. Defaults: DEFAULT_TURNS (1 s, 4 and 11 rounds). A server whose requests take seconds needs longer turns.
   * `connections` replaces load.connections for the warm-ups and turns (a ramp's queue limit is not a
   * steady load's). A shipped server whose bug grows with the requests it serves sets `brokenRounds`: it
   * takes that many turns and no more, so every run measures it at the same age, while the others go on
   * while a target is too close; one whose bug grows with time sets minRounds = maxRounds (see
   * docs/measuring.md). `false`: one server after another, each for durationSeconds, for a bug that needs
   * sustained load to show (a backlog that drains between turns).
   */
  turns?: { seconds?: number; minRounds?: number; maxRounds?: number; brokenRounds?: number; connections?: number } | false;
}

/** One answer the load received, kept for the contract check (see answers.ts). Header names are lower case. */
export interface AnswerSample {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Date.now() when it arrived: timestamps in the body are compared with it. */
  receivedAt: number;
}

/**
 * What every answer to the exercise's load must be, checked on a steady sample of the answers the load
 * receives (about 20 a second per server) after each server's turns: what a client relies on (status,
 * Content-Type, size, shape, a timestamp close to the answer).
 */
export interface AnswerContract {
  /** The ways one answer breaks the contract, in words; empty when it keeps it. */
  check(answer: AnswerSample): string[];
  /** Where every answer must carry fresh data: a key that must not repeat among the sampled answers. */
  distinct?(answer: AnswerSample): string | undefined;
  /** What the key is, for the failure ("the seed data"). */
  distinctWhat?: string;
}

export interface RampProfile {
  from: number;
  to: number;
  steps: number;
  stepSeconds: number;
}

/**
 * A service the harness starts before an exercise's servers and stops after them, with its data in a
 * temporary folder. Each server gets fresh state from it and the environment that points at it.
 * - s3: a real S3 API (s3rver); the server gets S3_ENDPOINT, S3_BUCKET and the AWS_* credentials.
 *   latencyMs delays every S3 request, as a remote region's round trip would.
 * - log-file: an empty file per server, named in LOG_FILE, that the probe can read.
 * - broker: a real MQTT broker (aedes) standing in for Kafka; the server gets BROKER_URL and its own
 *   BROKER_TOPIC. ackLatencyMs holds each publish before its acknowledgement, one at a time per
 *   connection; port is the MQTT port. A subscriber in the broker counts the events per topic.
 * - statsd: a DNS server for names under hotpath.test (set latency, answers per second and TTL), a StatsD
 *   sink on 127.0.0.1 and 127.0.0.2 counting metric lines per address, and an upstream HTTP API reached by
 *   name; the server gets DNS_SERVER, STATSD_HOST, STATSD_PORT and UPSTREAM_URL. See services/statsd.ts.
 * - route-table: a configuration service publishing a route table as a file (a copy of `source` per server,
 *   named in ROUTES_FILE), published again every publishEveryMs with the next revision; probes change its
 *   routes through it. See services/route-table.ts.
 */
export type ServiceRequest =
  | { kind: 's3'; latencyMs?: number; port?: number }
  | { kind: 'log-file' }
  | { kind: 'broker'; ackLatencyMs?: number; port?: number; mark?: { field: string; prefix: string } }
  | ({ kind: 'statsd' } & StatsdOptions)
  | ({ kind: 'route-table' } & RouteTableOptions);

/** What a correctness probe gets besides the server's URL. */
export interface CheckContext {
  services: ServiceContexts;
}

/** What the after-load check gets: the services, and what the load and the probes asked of the server. */
export interface AfterLoadContext extends CheckContext {
  baseUrl: string;
  /** 2xx answers of the load, warm-ups included (requests still in flight when a phase stopped are not counted). */
  answered: number;
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
  services?: ServiceRequest[];
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
   * stage may still show (none, or smaller ones, never `shipped`), with `why` when there are any.
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
  if (!manifest.load.path.startsWith('/')) problems.push(`load.path "${manifest.load.path}" must start with /`);
  const { connections, warmupSeconds, durationSeconds } = manifest.load;
  if (!(Number.isInteger(connections) && connections > 0)) problems.push('load.connections must be a positive integer');
  if (!(warmupSeconds >= 0)) problems.push('load.warmupSeconds must be 0 or more');
  if (!(durationSeconds > 0 && durationSeconds <= 600)) problems.push('load.durationSeconds must be between 0 and 600: every run is bounded');
  if (manifest.load.rate !== undefined && !(manifest.load.rate > 0)) problems.push('load.rate must be a positive number of req/s');
  if (manifest.stages.length === 0) problems.push('there must be at least one stage');
  if (manifest.hints.length === 0) problems.push('there must be at least one hint');
  if (manifest.goal.length === 0) problems.push('goal must have at least one target');
  const targets = [...manifest.goal, ...manifest.stages.flatMap((s) => s.targets)];
  if (!manifest.ceilingFile && targets.some((t) => t.against === 'ceiling')) {
    problems.push('a target is set against the ceiling, but there is no ceilingFile');
  }

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
    for (const target of stage.targets) problems.push(...validateTarget(target, where));
  });
  for (const claim of manifest.profile?.frames ?? []) {
    if (!claim.name && !claim.file) problems.push('profile.frames: a claim names a frame by name, file or both');
    if (!(claim.atLeast > 0 && claim.atLeast < 1)) problems.push(`profile.frames: ${claim.name ?? claim.file}: atLeast is a share between 0 and 1`);
  }
  for (const target of manifest.symptom ?? []) {
    problems.push(...validateTarget(target, 'symptom'));
    if (target.against !== 'itself') problems.push("symptom: a target on the shipped server is judged against 'itself'");
  }
  const ramp = manifest.load.ramp;
  if (ramp) {
    if (!(ramp.from >= 1 && ramp.to > ramp.from)) problems.push('load.ramp: from must be at least 1 req/s and to above it');
    if (!(Number.isInteger(ramp.steps) && ramp.steps >= 2)) problems.push('load.ramp: steps must be a whole number, 2 or more');
    if (!(ramp.stepSeconds >= 1 && ramp.steps * ramp.stepSeconds <= 600)) problems.push('load.ramp: stepSeconds must be 1 or more, the whole ramp 600 s at most');
  }
  const turns = manifest.load.turns;
  if (turns !== undefined && turns !== false) {
    const { seconds = DEFAULT_TURNS.seconds, minRounds = DEFAULT_TURNS.minRounds, maxRounds = DEFAULT_TURNS.maxRounds } = turns;
    if (!(seconds >= 0.5 && seconds <= 30)) problems.push('load.turns.seconds must be between 0.5 and 30');
    if (!(Number.isInteger(minRounds) && minRounds >= 3)) problems.push('load.turns.minRounds must be a whole number, 3 or more');
    if (!(Number.isInteger(maxRounds) && maxRounds >= minRounds && maxRounds <= 30)) problems.push('load.turns.maxRounds must be a whole number from minRounds to 30');
    const { brokenRounds = maxRounds } = turns;
    if (!(Number.isInteger(brokenRounds) && brokenRounds >= minRounds && brokenRounds <= maxRounds)) problems.push('load.turns.brokenRounds must be a whole number from minRounds to maxRounds');
  }
  if (typeof manifest.contract?.check !== 'function') problems.push('contract.check is missing: what every answer under load must be');
  const fresh = manifest.load.freshCopy;
  if (fresh && !(Number.isInteger(fresh.pairs) && fresh.pairs >= 2 && fresh.pairs <= 30)) problems.push('load.freshCopy.pairs must be a whole number from 2 to 30');
  if (!fresh && [...targets, ...(manifest.symptom ?? [])].some((t) => t.metric === 'throughputKept')) {
    problems.push('throughputKept needs a fresh copy to compare with (load.freshCopy)');
  }
  const rampMetrics: Metric[] = ['kneeRate', 'latencyCliff'];
  if (!ramp && [...targets, ...(manifest.symptom ?? [])].some((t) => rampMetrics.includes(t.metric))) {
    problems.push('kneeRate and latencyCliff need a ramped load (load.ramp)');
  }
  for (const target of manifest.goal) {
    problems.push(...validateTarget(target, 'goal'));
    if (target.against === 'previous') problems.push('goal: a target against "previous" has no meaning for the trainee\'s file');
  }
  return problems;
}

function validateTarget(target: Target, where: string): string[] {
  const problems: string[] = [];
  const bounds = [target.atLeast, target.atMost].filter((b) => b !== undefined);
  if (bounds.length !== 1) problems.push(`${where}: a target needs exactly one of atLeast or atMost`);
  if (bounds.some((b) => !(typeof b === 'number' && b > 0 && Number.isFinite(b)))) {
    problems.push(`${where}: a target's ratio must be a positive number`);
  }
  if (target.against === 'itself' && !SELF_RATIO_METRICS.includes(target.metric)) {
    problems.push(`${where}: only ${SELF_RATIO_METRICS.join(', ')} can be judged against 'itself'`);
  }
  return problems;
}

/** Whether a stage's targets are expected to hold on the running Node (see Stage.nodeMajors). */
export function stageHoldsHere(stage: Stage, version = process.versions.node): boolean {
  return !stage.nodeMajors || stage.nodeMajors.includes(Number(version.split('.')[0]));
}
