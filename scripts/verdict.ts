// Judges each server of a run against its targets, as ratios to references measured in the same run.
import { availableParallelism } from 'node:os';
import { stageHoldsHere, type ExerciseManifest, type Metric, type Reference, type Target } from './manifest.ts';
import type { ServerRun, ServerVerdict, TargetResult } from './result.ts';

import { answerProblems } from './answers.ts';
import { integer, percent, ratio } from './format.ts';
import { median, medianInterval } from './stats.ts';

interface MetricInfo {
  name: string;
  unit: string;
  /**
   * Whether it can be read from one turn of a run in turns (its load and probe figures): then a target on
   * it is judged round by round. A figure of the whole run (a heap's slope, a ramp's knee) cannot.
   */
  perTurn: boolean;
  value(run: ServerRun): number | undefined;
  /** The value with its unit, for the report. */
  format(value: number): string;
  /** What the figure means, in a line, and why it can read below zero where it can (`help figures`). */
  means: string;
}

const METRICS: Record<Metric, MetricInfo> = {
  requestsPerSecond: {
    perTurn: true,
    name: 'req/s',
    unit: 'req/s',
    value: (run) => run.load?.requestsPerSecond.mean,
    format: (v) => `${integer(v)} req/s`,
    means: 'answers a second over the measured phase (or the turns), with the load\'s connections always busy: how much work the server gets through.',
  },
  latencyP99: {
    perTurn: true,
    name: 'p99 latency',
    unit: 'ms',
    value: (run) => run.load?.latency.p99,
    format: (v) => `${integer(v)} ms`,
    means: 'the time within which 99 answers in 100 arrived: the slow tail a user meets, which a mean hides.',
  },
  heapGrowth: {
    perTurn: true,
    name: 'heap growth',
    unit: 'MB/s',
    value: (run) => run.heap?.bytesPerSecond,
    format: (v) => `${(v / 1e6).toFixed(2)} MB/s`,
    means: 'the slope of the heap\'s low points (what is left after a collection) over the measured phase: what the server keeps. It reads below zero when the collector frees more than the phase adds, e.g. the warm-up\'s garbage collected late; near zero or below is a server that keeps nothing.',
  },
  minorGcShare: {
    perTurn: true,
    name: 'minor GC share',
    unit: '% of time',
    value: (run) => run.runtime?.gc.minor.share,
    format: (v) => `${percent(v)} of time`,
    means: 'the share of wall time spent in scavenges (young-generation collections); it also falls when a server gets slower elsewhere, so targets use the time per request.',
  },
  minorGcPerRequest: {
    perTurn: true,
    name: 'scavenge time per request',
    unit: 'ms/req',
    value: (run) => (run.runtime && run.load && run.load.requests > 0 ? run.runtime.gc.minor.ms / run.load.requests : undefined),
    format: (v) => `${v.toFixed(2)} ms/req`,
    means: 'milliseconds of scavenging (young-generation collection) per answer: what each request costs the collector, whatever else slows the server.',
  },
  lateRequestsPerSecond: {
    perTurn: false,
    name: 'late req/s',
    unit: 'req/s',
    value: lastQuarter,
    format: (v) => `${integer(v)} req/s`,
    means: 'the median second of the last quarter of the measured phase: how fast the server still is after it has served for a while.',
  },
  throughputKept: {
    perTurn: false,
    name: 'throughput kept',
    unit: "x a fresh copy's req/s",
    value: (run) => run.freshCopy?.kept,
    format: (v) => `${ratio(v)} of a fresh copy's req/s`,
    means: "the aged server's req/s over a fresh copy's of the same file, loaded in turns after the measured phase: 1x keeps its speed as it ages, less is a server that slows with age.",
  },
  pendingLookups: {
    perTurn: true,
    name: 'pending lookups (peak)',
    unit: 'lookups',
    value: (run) => {
      const peak = run.runtime?.pendingPeak;
      return peak ? (peak.QUERYWRAP ?? 0) + (peak.GETADDRINFOREQWRAP ?? 0) : undefined;
    },
    format: (v) => `${integer(v)} lookups`,
    means: 'the most DNS lookups in flight at once (c-ares queries and getaddrinfo requests, from async_hooks): a queue of them is work waiting on the resolver.',
  },
  // The interpolated rate where the server stopped keeping up; results from before it have only the step's answers.
  kneeRate: {
    perTurn: false,
    name: 'knee',
    unit: 'req/s',
    value: (run) => run.ramp?.knee?.rate ?? run.ramp?.knee?.achieved,
    format: (v) => `${integer(v)} req/s`,
    means: 'in a ramp, the offered rate at which the server stops keeping up (answers under 90% of it, or p99 past 10x its low-load p99).',
  },
  latencyCliff: {
    perTurn: false,
    name: 'p99 past the knee',
    unit: 'x its low-load p99',
    value: (run) => run.ramp?.cliff,
    format: (v) => `${ratio(v)} its low-load p99`,
    means: "in a ramp, the p99 at the highest rate offered over the p99 at the lowest: how steep the queueing cliff past the knee is.",
  },
};

/**
 * req/s over the last quarter of the measured phase (at least one second): the median of the quarter's
 * seconds, so one second disturbed by something else on the machine does not decide it.
 */
export function lastQuarter(run: ServerRun): number | undefined {
  const seconds = run.load?.perSecond;
  if (!seconds || seconds.length < 2) return undefined;
  return median(seconds.slice(-Math.max(1, Math.floor(seconds.length / 4))));
}

/** What a ratio of the server's own figures was taken from, for the report: a ramp's p99s, or the aged and fresh req/s. */
export function selfDetail(metric: Metric, server: ServerRun): string {
  const ramp = server.ramp;
  if (metric === 'latencyCliff' && ramp) {
    const last = ramp.steps.at(-1);
    return last ? `p99 ${integer(ramp.lowLoadP99)} ms at ${integer(ramp.steps[0]!.offered)} req/s → ${integer(last.latency.p99)} ms at ${integer(last.offered)}` : '';
  }
  const fresh = server.freshCopy;
  if (metric === 'throughputKept' && fresh && fresh.aged.length > 0) {
    return `aged ${integer(median(fresh.aged))} vs fresh copy ${integer(median(fresh.fresh))} req/s, ${fresh.aged.length} s each in turns`;
  }
  return '';
}

export function metricName(metric: Metric): string {
  return METRICS[metric].name;
}

export function metricUnit(metric: Metric): string {
  return METRICS[metric].unit;
}

export function formatMetric(metric: Metric, value: number): string {
  return METRICS[metric].format(value);
}

export function metricMeaning(metric: Metric): string {
  return METRICS[metric].means;
}

/** Every figure a target can be set on, with what it means (`help figures`). */
export function figureMeanings(): string[] {
  return Object.values(METRICS).map((info) => `${info.name} (${info.unit}): ${info.means}`);
}

/** A server's value of one figure with its unit, or undefined when the run did not measure it. */
export function figureOf(metric: Metric, run: ServerRun): string | undefined {
  const value = METRICS[metric].value(run);
  return value === undefined || !Number.isFinite(value) ? undefined : METRICS[metric].format(value);
}

/** The targets a server of the run is held to: a stage's own, the goal for the trainee's file, none for references. */
export function targetsFor(manifest: ExerciseManifest, run: ServerRun): Target[] {
  if (run.role === 'stage' && run.stage !== undefined) return manifest.stages[run.stage - 1]?.targets ?? [];
  if (run.role === 'mine') return run.stretch !== undefined ? (manifest.stages[run.stretch - 1]?.targets ?? []) : manifest.goal;
  return [];
}

/**
 * The reference stage whose targets go beyond the goal, for `verify --stretch`: the last stage, when there
 * is more than one, it is not a stage wrong on purpose, and its targets are not the goal's.
 */
export function stretchStage(manifest: ExerciseManifest): number | undefined {
  const last = manifest.stages.at(-1);
  if (manifest.stages.length < 2 || !last || last.expectedToFail) return undefined;
  return JSON.stringify(last.targets) === JSON.stringify(manifest.goal) ? undefined : manifest.stages.length;
}

export function findReference(runs: ServerRun[], run: ServerRun, reference: Reference): ServerRun | undefined {
  if (reference === 'itself') return run;
  if (reference === 'broken') return runs.find((r) => r.role === 'broken');
  if (reference === 'ceiling') return runs.find((r) => r.role === 'ceiling');
  const stage = run.role === 'mine' ? run.stretch : run.stage;
  if (stage === undefined) return undefined;
  if (stage === 1) return runs.find((r) => r.role === 'broken');
  return runs.find((r) => r.role === 'stage' && r.stage === stage - 1);
}

/** Problems that fail a server however fast it was. */
export function honestyProblems(run: ServerRun): string[] {
  const problems: string[] = [];
  if (run.failure) problems.push(run.failure);
  if (run.check && !run.check.ok) {
    problems.push(...run.check.failures.map((f) => `correctness: ${f}`));
    if (run.check.failures.length === 0) problems.push('correctness: the probe checked nothing');
  }
  problems.push(...answerProblems(run.answers));
  if (run.checkAfterLoad && !run.checkAfterLoad.ok) {
    problems.push(...run.checkAfterLoad.failures.map((f) => `the correctness probe after the load: ${f}`));
    if (run.checkAfterLoad.failures.length === 0) problems.push('the correctness probe after the load checked nothing');
  }
  if (run.afterLoad && !run.afterLoad.ok) {
    problems.push(...run.afterLoad.failures.map((f) => `after the load: ${f}`));
    if (run.afterLoad.failures.length === 0) problems.push('after the load: the check checked nothing');
  }
  const load = run.load;
  if (load) {
    if (load.errors > 0) problems.push(`${load.errors} request errors under load`);
    if (load.timeouts > 0) problems.push(`${load.timeouts} requests timed out under load`);
    if (load.non2xx > 0) problems.push(`${load.non2xx} answers were not 2xx`);
    if (load.requests === 0) problems.push('no request was answered');
  } else if (!run.failure) {
    problems.push('it was not measured under load');
  }
  return problems;
}

/** Why this machine cannot judge the target (too few cores for it), or undefined when it can. */
export function cannotJudgeHere(target: Target, cores = availableParallelism()): string | undefined {
  const needs = target.needsCores;
  if (!needs || cores >= needs.count) return undefined;
  return `the server has ${cores} core${cores === 1 ? '' : 's'} here and this target needs ${needs.count}: ${needs.why}`;
}

export function judgeTarget(runs: ServerRun[], run: ServerRun, target: Target): TargetResult {
  const metric = METRICS[target.metric];
  const required = (target.atLeast ?? target.atMost)!;
  const name = target.against === 'itself' ? metric.name : `${metric.name} vs ${target.against}`;
  const cannot = cannotJudgeHere(target);
  if (cannot) return { target, name, referenceLabel: target.against, pass: false, note: 'cannot be judged here', cannotJudge: cannot };
  if (target.against === 'itself') {
    // The metric is already a ratio of the server's own figures: it is judged as it is.
    const value = metric.value(run);
    const detail = selfDetail(target.metric, run);
    const base = { target, name, referenceLabel: run.label, pass: false, ...(detail ? { detail } : {}) };
    if (value === undefined) return { ...base, note: `${run.label} has no ${metric.name} figure` };
    return { ...base, value, ratio: value, ...bounds(target, value, required) };
  }
  const reference = findReference(runs, run, target.against);
  const base = { target, name, referenceLabel: reference?.label ?? target.against, pass: false };
  if (!reference) return { ...base, note: `no ${target.against} server was measured in this run` };
  const referenceValue = metric.value(reference);
  const value = metric.value(run);
  if (referenceValue === undefined || value === undefined) {
    return { ...base, referenceValue, value, note: `${value === undefined ? run.label : reference.label} has no ${metric.name} figure` };
  }
  if (referenceValue <= 0) return { ...base, referenceValue, value, note: `${reference.label} measured ${referenceValue} ${metric.unit}; no ratio can be taken` };
  const ratios = metric.perTurn ? roundRatios(metric, run, reference) : [];
  if (ratios.length === 0) {
    const measured = value / referenceValue;
    return { ...base, referenceValue, value, ratio: measured, requiredValue: required * referenceValue, ...bounds(target, measured, required) };
  }
  // In turns: the median of the per-round ratios, called only when the interval clears the target.
  const measured = median(ratios);
  const interval = medianInterval(ratios);
  const call = callInterval(target, interval.low, interval.high, required);
  return {
    ...base,
    referenceValue,
    value,
    ratio: measured,
    requiredValue: required * referenceValue,
    margin: bounds(target, measured, required).margin,
    pass: call === 'pass',
    rounds: { ratios, ...interval },
    ...(call === 'too close' ? { tooClose: true } : {}),
  };
}

/** The server's figure over the reference's, round by round (rounds where either has no figure are left out). */
export function roundRatios(metric: MetricInfo, run: ServerRun, reference: ServerRun): number[] {
  if (!run.turns || !reference.turns) return [];
  const ratios: number[] = [];
  for (const turn of run.turns) {
    const other = reference.turns.find((t) => t.round === turn.round);
    if (!other) continue;
    const value = metric.value({ ...run, load: turn.load, runtime: turn.runtime, heap: turn.heap });
    const base = metric.value({ ...reference, load: other.load, runtime: other.runtime, heap: other.heap });
    if (value !== undefined && base !== undefined && base > 0) ratios.push(value / base);
  }
  return ratios;
}

/** Pass when the whole interval is on the right side of the target, fail when it is all on the wrong side. */
export function callInterval(target: Target, low: number, high: number, required: number): 'pass' | 'fail' | 'too close' {
  if (target.atLeast !== undefined) return low >= required ? 'pass' : high < required ? 'fail' : 'too close';
  return high <= required ? 'pass' : low > required ? 'fail' : 'too close';
}

/**
 * Whether another round could still change a verdict of the run so far: the turns go on while one could.
 * A server with a target too close to call is decided all the same when another target already misses
 * clearly (one miss fails it); a symptom is decided when none of its targets is too close. A target whose
 * server or reference takes no more turns (`done`) cannot change: it does not ask for another round.
 */
export function anyTooClose(manifest: ExerciseManifest, runs: ServerRun[], done: (label: string) => boolean = () => false): boolean {
  const open = (t: TargetResult, label: string) => t.tooClose === true && !done(label) && !done(t.referenceLabel);
  return judge(manifest, runs).some((verdict) =>
    verdict.symptom
      ? verdict.problems.length === 0 && verdict.targets.some((t) => open(t, verdict.label))
      : verdict.tooClose === true && verdict.targets.some((t) => open(t, verdict.label)),
  );
}

export function bounds(target: Target, measured: number, required: number): { pass: boolean; margin: number } {
  const atLeast = target.atLeast !== undefined;
  const pass = atLeast ? measured >= required : measured <= required;
  const margin = atLeast ? measured / required - 1 : measured > 0 ? required / measured - 1 : Infinity;
  return { pass, margin };
}

export function judge(manifest: ExerciseManifest, runs: ServerRun[]): ServerVerdict[] {
  const broken = runs.find((run) => run.role === 'broken');
  const symptom: ServerVerdict[] =
    broken && manifest.symptom
      ? [
          {
            label: broken.label,
            pass: honestyProblems(broken).length === 0 && manifest.symptom.every((target) => judgeTarget(runs, broken, target).pass),
            targets: manifest.symptom.map((target) => judgeTarget(runs, broken, target)),
            problems: honestyProblems(broken),
            symptom: true,
          },
        ]
      : [];
  return symptom.concat(judgeFixes(manifest, runs));
}

/** A server held to targets (a stage, the trainee's file), as opposed to a reference it is compared with. */
export function judgedServer(run: ServerRun): boolean {
  return (run.role === 'stage' && !run.referenceOnly) || run.role === 'mine';
}

function judgeFixes(manifest: ExerciseManifest, runs: ServerRun[]): ServerVerdict[] {
  return runs
    .filter(judgedServer)
    .map((run) => {
      const targets = targetsFor(manifest, run).map((target) => judgeTarget(runs, run, target));
      const problems = honestyProblems(run);
      const stage = run.role === 'stage' && run.stage !== undefined ? manifest.stages[run.stage - 1] : undefined;
      const notExpectedHere =
        stage && !stageHoldsHere(stage) ? `on Node ${process.versions.node.split('.')[0]} this stage is not expected to reach its targets: ${stage.otherVersions}` : undefined;
      if (stage?.expectedToFail) {
        // Wrong on purpose: it never passes, and it is as expected when rejected for the named reason.
        const { why, problem } = stage.expectedToFail;
        const rejected = problems.some((p) => p.includes(problem));
        return { label: run.label, pass: false, targets, problems, expectedToFail: { why, problem, rejected } };
      }
      const cannotJudge = problems.length === 0 ? targets.find((t) => t.cannotJudge)?.cannotJudge : undefined;
      if (cannotJudge) return { label: run.label, pass: false, targets, problems, cannotJudge };
      const pass = problems.length === 0 && targets.length > 0 && targets.every((t) => t.pass);
      const tooClose = !pass && problems.length === 0 && targets.some((t) => t.tooClose) && targets.every((t) => t.pass || t.tooClose);
      return { label: run.label, pass, targets, problems, ...(tooClose ? { tooClose } : {}), ...(notExpectedHere ? { notExpectedHere } : {}) };
    });
}

/**
 * Whether a run's verdicts pass: every judged server passed, or is marked as not holding on this Node
 * version, or is wrong on purpose and was rejected as named. The broken server's symptom is shown, not judged.
 */
export function verdictsPass(verdicts: ServerVerdict[]): boolean {
  return verdicts.some((v) => !v.symptom) && verdicts.every((v) => v.symptom || v.pass || v.notExpectedHere !== undefined || v.expectedToFail?.rejected);
}

/** No server failed outright, and some target could not be called either way: the run cannot say. */
export function verdictsTooClose(verdicts: ServerVerdict[]): boolean {
  const open = verdicts.filter((v) => !v.symptom && !v.pass && v.notExpectedHere === undefined && !v.expectedToFail?.rejected);
  return open.length > 0 && open.every((v) => v.tooClose || v.cannotJudge !== undefined);
}

/** With --runs N, a verdict is too close to call when its margin is within this many run-to-run spreads (CV). */
export const NOISE_SPREADS = 2;
