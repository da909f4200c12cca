// The one model of a run's result. The terminal table, --json and (later) the hub all render this.
import type { CheckResult } from './check.ts';
import type { LoadProfile } from './load-profile.ts';
import type { ProcessFigures } from './process-figures.ts';
import type { RuntimeFigures } from './probe/messages.ts';
import type { HeapTrend } from './trend.ts';

/** What the load measured on one server: autocannon's figures over the measured phase. */
export interface LoadResult {
  requestsPerSecond: { mean: number; stdev: number };
  /** Milliseconds. autocannon measures whole milliseconds, so a fast server reads 0 or 1. */
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  bytesPerSecond: number;
  requests: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** 2xx answers over both phases, warm-up included: what the server should have done the work for. */
  answered: number;
  /** Requests answered in each second of the measured phase, in order. */
  perSecond: number[];
  durationSeconds: number;
}

export type Role = 'broken' | 'stage' | 'mine' | 'ceiling';

export interface ServerRun {
  role: Role;
  /** "broken", "stage 1", "mine", "ceiling". */
  label: string;
  /** Shown beside the label: the stage's title or the file. */
  title: string;
  /** Relative to the repository. */
  file: string;
  stage?: number;
  /** `verify --stretch`: the trainee's file held to this reference stage's targets ('previous' is the stage before it). */
  stretch?: number;
  /** A reference stage measured only as what a stretch is compared with: not judged itself. */
  referenceOnly?: boolean;
  nodeFlags: string[];
  check?: CheckResult;
  load?: LoadResult;
  runtime?: RuntimeFigures;
  /** The heap's trend over the measured phase, from the probe's samples. */
  heap?: HeapTrend;
  /** The exercise's check after the load (e.g. every upload arrived), when it has one. */
  afterLoad?: CheckResult;
  /**
   * With the manifest's finishedWork: how much of the work handed to the services they saw finished over the
   * measured phase (02: payloads stored), over how many seconds.
   */
  finishedWork?: { count: number; seconds: number };
  /** Why this server could not be measured: it did not start, crashed, or failed its check. */
  failure?: string;
  /** What the server printed, kept when it failed. */
  output?: string;
  /** For a ramped load (the manifest's load.ramp or `run --ramp`): each step, and the knee. */
  ramp?: RampResult;
  /** For `run --soak`: the figures window by window, their trends and a verdict. */
  soak?: SoakResult;
  /** With load.freshCopy: the server after its measured phase and a fresh copy of it, loaded in turns. */
  freshCopy?: FreshCopyResult;
  /** The servers of a verdict loaded in turns: this server's figures in each of its turns, in order. */
  turns?: TurnFigures[];
  /** A steady sample of the answers the load received, held to the exercise's contract (answers.ts). */
  answers?: AnswerCheck;
  /** The correctness probe run again after the load, while the server still ran. */
  checkAfterLoad?: CheckResult;
  /**
   * Each of the server's processes over the measured phase (or its turns, summed): the one the harness
   * started and a cluster's workers, with the cores each used and how busy its event loop was.
   */
  processes?: ProcessFigures[];
  /** In turns: what its processes did while the other servers took their turns (between-turns.ts). */
  betweenTurns?: BetweenTurns;
  othersInTurns?: OthersInTurns;
  beforeListening?: BeforeListening;
  /** Worker threads it started that wrote no figures ("process P, thread T"): their GC and heap were not counted. */
  unseenThreads?: string[];
  /** Second by second over both phases, for the doctor's reading of a plain `run --load` (doctor/seconds.ts). */
  seconds?: { load: LoadSecond[]; server: ServerSecond[] };
}

/**
 * The cores a server's processes used, together, while the other servers of the verdict took their turns,
 * over `seconds` of them; for a server that is judged, the most it may use (`atMost`).
 */
/**
 * The cores other programs on the machine used during a server's turns (the median turn); for a judged
 * server, the other server's median furthest from its own, and whose (others-during-turns.ts).
 */
export interface OthersInTurns {
  cores: number;
  other?: number;
  otherLabel?: string;
}

/** A server's processes' CPU from their start until it listened, and its isolates (scripts/before-listening.ts). */
export interface BeforeListening {
  cpuSeconds: number;
  isolates: number;
  /** The most a judged server may use, from the shipped server's per isolate. */
  atMost?: number;
}

export interface BetweenTurns {
  cores: number;
  seconds: number;
  atMost?: number;
}

/** One second of the load, as the load generator saw it. */
export interface LoadSecond {
  requests: number;
  /** p99 of this second's 2xx answers, ms; absent for a second with none. */
  p99?: number;
}

/** One second of the server, as the probe and /proc saw it. */
export interface ServerSecond {
  /** The main thread's event-loop utilization over the second, 0 (idle) to 1 (always busy). */
  utilization?: number;
  /** Cores each of the server's processes used over the second (CPU time over wall time), by pid. */
  cores: Record<number, number>;
  /** Each cluster worker's event-loop utilization over the second, by pid (a worker's own probe writes it). */
  workers?: Record<number, number>;
  heapUsed?: number;
  /** Active resources by type at the end of the second (process.getActiveResourcesInfo). */
  active?: Record<string, number>;
}

/** One turn of one server: the load's figures over the turn, and the probe's over the same time. */
export interface TurnFigures {
  round: number;
  load: LoadResult;
  runtime?: RuntimeFigures;
  /** The heap's slope within the turn, from the probe's samples (several a second with probe.sampleMs). */
  heap?: HeapTrend;
  /** Each of the server's processes over the turn, as `processes` over the run. */
  processes?: ProcessFigures[];
  /** The cores other programs on the machine used during the turn (outside the harness's process tree). */
  othersCores?: number;
}

export interface AnswerCheck {
  sampled: number;
  /** Sampled answers that broke the contract in at least one way. */
  broken: number;
  /** Each way it was broken, with how many sampled answers broke it so and one of them. */
  problems: Array<{ problem: string; count: number; example: string }>;
  /** Every answer's key (the contract's `everyAnswer`): how many had one, how many repeated an earlier one's. */
  keyed?: { what: string; answers: number; repeated: number; example?: string };
}

/** Requests answered per second in each turn of the aged server and of its fresh copy (see fresh-copy.ts). */
export interface FreshCopyResult {
  aged: number[];
  fresh: number[];
  /** The aged server's median turn over the fresh copy's: the throughputKept metric. */
  kept?: number;
}

/**
 * What a server is compared with: the shipped broken server (or a measured baseline, `workshop measure`),
 * the stage before, or the bare framework; or 'itself' for a metric that already is a ratio of two
 * moments of the same server's run (throughputKept).
 */
export type Reference = 'broken' | 'baseline' | 'previous' | 'ceiling' | 'itself';

/** A target as a result keeps it: plain data, its metric named by id (a manifest's Target holds the metric itself). */
export interface TargetRecord {
  metric: string;
  against: Reference;
  atLeast?: number;
  atMost?: number;
  needsCores?: { count: number; why: string };
  whenMissed?: string;
}

export interface TargetResult {
  target: TargetRecord;
  /** e.g. "req/s vs broken". */
  name: string;
  referenceLabel: string;
  referenceValue?: number;
  value?: number;
  ratio?: number;
  /** The target in absolute units for this run: the ratio times the reference measured now. */
  requiredValue?: number;
  /** How far past the threshold, as a fraction: +0.5 is 50% better than needed, negative is short. */
  margin?: number;
  pass: boolean;
  /** Why it could not be judged, when it could not. */
  note?: string;
  /** value, referenceValue and requiredValue with the metric's unit, as the report shows them. */
  shown?: { value?: string; referenceValue?: string; requiredValue?: string };
  /**
   * Servers loaded in turns: the ratio in each round, `ratio` their median, and the interval for the
   * median (order statistics, see stats.ts). Absent for a figure of the whole run (a heap's slope).
   */
  rounds?: { ratios: number[]; low: number; high: number; confidence: number };
  /** For a ratio of the server's own figures: what it was taken from ("aged 7,718 vs fresh copy 6,757 req/s"). */
  detail?: string;
  /** The interval straddles the target after the most rounds allowed: neither a pass nor a fail. */
  tooClose?: boolean;
  /** Why this machine cannot judge it (Target.needsCores). */
  cannotJudge?: string;
  /** With --runs N: the ratio in each run; `ratio` is then their median. */
  spread?: Spread;
  /** With --runs N: the margin is within two run-to-run spreads, so the machine is too noisy to call it. */
  noisy?: boolean;
}

export interface ServerVerdict {
  label: string;
  pass: boolean;
  targets: TargetResult[];
  /** Everything that fails this server apart from its targets: errors, timeouts, non-2xx, a failed check. */
  problems: string[];
  /** No problem, and every target not passed is too close to call (see TargetResult.tooClose). */
  tooClose?: boolean;
  /** Why this machine cannot judge the targets (too few cores for what the fix does). */
  cannotJudge?: string;
  /** Set when this stage's targets are not expected to hold on this Node version, with the reason. */
  notExpectedHere?: string;
  /**
   * Set on the broken server's verdict when the manifest names a symptom it must show (e.g. the latency
   * cliff): judged and shown, but it does not decide whether the run passes.
   */
  symptom?: boolean;
  /** For a stage that is wrong on purpose (Stage.expectedToFail): whether it was rejected for the named reason. */
  expectedToFail?: { why: string; problem: string; rejected: boolean };
}

/** The id a `workshop measure` run reports under: a team's own service, not an exercise. */
export const MEASURED_SERVICE_ID = 'measure';

export interface RunReport {
  exercise: { id: string; title: string };
  node: string;
  startedAt: string;
  load: LoadProfile;
  servers: ServerRun[];
  verdicts: ServerVerdict[];
  /** True when every judged server passed. */
  pass: boolean;
  /**
   * No server failed, but a target's interval still straddled its threshold after the most rounds: the
   * run cannot say; exit code 3.
   */
  tooClose?: boolean;
  /**
   * The servers were loaded in turns: how many rounds, of how many seconds each, and the most allowed.
   * brokenRounds: the shipped server's turns, when it stopped before the others (see LoadProfile.turns).
   * moreRoundsFor: the targets ("server: target") too close to call that asked for rounds past the fewest.
   */
  turns?: { rounds: number; seconds: number; maxRounds: number; brokenRounds?: number; moreRoundsFor?: string[] };
  /**
   * With `--runs N` (N > 1): the same measurement N times; `servers` are the last run's, the verdicts are on
   * the median of each target's ratio, and each server's main figures come with their spread.
   */
  runs?: { count: number; passedRuns: number; figures: Record<string, { requestsPerSecond: Spread; latencyP99: Spread }> };
}

/** A figure measured several times: the values, their median and coefficient of variation (sd / mean). */
export interface Spread {
  values: number[];
  median: number;
  cv: number;
}

// ---- Load over time: a ramp of offered rates, and a soak (a long steady load). Shared by the CLI's
// reports, the SVG charts and (later) the hub's live charts.

export interface LatencyFigures {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** One step of a ramp: a fixed offered rate for a few seconds. */
export interface RampStep {
  /** Requests per second the load offered. */
  offered: number;
  /** Requests per second answered (2xx) during the step. */
  achieved: number;
  /** Milliseconds, of the requests answered during the step. */
  latency: LatencyFigures;
  errors: number;
  timeouts: number;
  non2xx: number;
  seconds: number;
  /** Cores other programs on the machine used during the step (Linux; absent elsewhere). */
  elsewhere?: number;
  /** Measured to place the knee, after the climb (see runRamp); the knee is taken from these. */
  settle?: boolean;
  /** Why it fell behind ("answered 114 of 140 req/s"), or undefined when it kept up; set by the ramp. */
  behind?: string;
}

/** Where the server stopped keeping up with the offered rate. */
export interface Knee {
  /** The highest offered rate the server kept up with, before the first step it did not. */
  offered: number;
  /** What it answered at that step. */
  achieved: number;
  /**
   * The offered rate at which it stopped keeping up, between that step and the next rate's (behind):
   * where the answered share or the p99 crosses its limit, interpolated (see ramp.ts `crossing`). The
   * figure the kneeRate metric judges.
   */
  rate?: number;
  /** Index of that step in RampResult.steps. */
  step: number;
  /** Why the next step is past the knee, in words ("answered 114 of 140 req/s", "p99 12x its low-load p99"). */
  reason: string;
}

export interface RampResult {
  from: number;
  to: number;
  stepSeconds: number;
  steps: RampStep[];
  /** p99 of the first step, the low-load reference for the latency criterion. */
  lowLoadP99: number;
  /** Undefined when the server kept up with every step: the ramp did not reach its knee. */
  knee?: Knee;
  /** Steps measured while other programs kept the machine busy, measured again and not used (in the order run). */
  remeasured?: RampStep[];
  /** The highest step's p99 over lowLoadP99: the queueing cliff past the knee. */
  cliff?: number;
}

/** One window of a soak (e.g. 10 s): what the load and the probe saw in it. */
export interface SoakWindow {
  /** Seconds since the soak began, at the window's start. */
  startSecond: number;
  seconds: number;
  requestsPerSecond: number;
  /** Milliseconds. */
  latencyP99: number;
  /** Lowest heap used in the window (bytes): the heap after collection, what a leak raises. Null without a probe sample in it. */
  heapUsed: number | null;
  /** Share of the window's wall time in GC, minor and major. Null without a probe sample in it. */
  gcShare: number | null;
  /**
   * Major (mark-compact) collections in the window; null without a probe sample in it. Only they free
   * old garbage, so the heap's trend is fitted on the windows that had one when enough did.
   */
  majorGcs: number | null;
}

export interface SoakTrend {
  /** Least-squares slope per minute, in the figure's unit. */
  slopePerMinute: number;
  /** The last window over the first (1 = flat). */
  change: number;
  degrading: boolean;
  /** For the heap: the windows the trend is fitted on, 'after-major' (those with a major GC) or 'all'. */
  basis?: 'after-major' | 'all';
  /** For the heap: those windows, as indices into SoakResult.windows, so the report and charts show the trend's own ends. */
  fittedOn?: number[];
}

export interface SoakResult {
  seconds: number;
  windowSeconds: number;
  windows: SoakWindow[];
  trends: { requestsPerSecond: SoakTrend; latencyP99: SoakTrend; heapUsed: SoakTrend; gcShare: SoakTrend };
  /** 'degrading' when any trend degrades or the server exited, with the reasons in words. */
  verdict: 'degrading' | 'steady';
  /** Seconds into the soak when the server exited (crashed, e.g. out of memory): the windows stop there. */
  endedAfter?: number;
  reasons: string[];
  /** What limits the verdict, in words (e.g. no major GC ran, so a rising heap may be garbage). */
  notes?: string[];
}
