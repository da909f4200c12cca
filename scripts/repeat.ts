// `--runs N`: the same measurement N times in a row, the verdict on the median of each target's ratio, and
// the run-to-run spread (coefficient of variation) beside every figure. A shared machine can lose a third of
// its speed for seconds at a time; one run cannot tell that from a regression, N runs show it.
import { runBench, type BenchOptions, type ServerSpec } from './bench.ts';
import type { Exercise } from './exercises.ts';
import type { Metric } from './metric.ts';
import type { RunReport, ServerVerdict, Spread, TargetResult } from './result.ts';
import { cv, median } from './stats.ts';
import { bounds, metricsOf, NOISE_SPREADS, verdictsPass, withShown } from './verdict.ts';


export function spread(values: number[]): Spread {
  return { values, median: median(values), cv: cv(values) };
}

export async function runBenchRepeated(exercise: Exercise, specs: ServerSpec[], options: BenchOptions, runs: number): Promise<RunReport> {
  const reports: RunReport[] = [];
  for (let index = 0; index < runs; index++) {
    if (runs > 1) options.onEvent?.({ type: 'repeat', index, of: runs });
    reports.push(await runBench(exercise, specs, options));
  }
  return combineRuns(reports, metricsOf(exercise.manifest));
}

/**
 * One report from N: the last run's servers in detail, each server's req/s and p99 as the median over the
 * runs with their spread, and verdicts on the median ratio of each target. A run's honesty problems
 * (errors, a failed probe) fail the verdict whichever run had them.
 */
export function combineRuns(reports: RunReport[], metrics: Map<string, Metric> = new Map()): RunReport {
  const last = reports.at(-1)!;
  if (reports.length === 1) return last;
  const figures: NonNullable<RunReport['runs']>['figures'] = {};
  for (const server of last.servers) {
    const runsOf = reports.map((r) => r.servers.find((s) => s.label === server.label)?.load).filter((l) => l !== undefined);
    if (runsOf.length === 0) continue;
    figures[server.label] = {
      requestsPerSecond: spread(runsOf.map((l) => l.requestsPerSecond.mean)),
      latencyP99: spread(runsOf.map((l) => l.latency.p99)),
    };
  }
  const verdicts = last.verdicts.map((verdict) =>
    combineVerdict(verdict, reports.map((r) => r.verdicts.find((v) => v.label === verdict.label && v.symptom === verdict.symptom)), metrics),
  );
  const pass = verdictsPass(verdicts);
  return { ...last, startedAt: reports[0]!.startedAt, verdicts, pass, runs: { count: reports.length, figures, passedRuns: reports.filter((r) => r.pass).length } };
}

function combineVerdict(verdict: ServerVerdict, across: Array<ServerVerdict | undefined>, metrics: Map<string, Metric>): ServerVerdict {
  const all = across.filter((v) => v !== undefined);
  const problems = [...new Set(all.flatMap((v, i) => v.problems.map((p) => (all.length > 1 ? `run ${i + 1}: ${p}` : p))))];
  const targets = verdict.targets.map((target, index) => {
    const combined = combineTarget(target, all.map((v) => v.targets[index]).filter((t) => t !== undefined));
    // The medians in the metric's unit; without the metric, the report shows the plain numbers.
    const metric = metrics.get(target.target.metric);
    return metric ? withShown(metric, combined) : { ...combined, shown: undefined };
  });
  const pass = problems.length === 0 && targets.length > 0 && targets.every((t) => t.pass);
  const expectedToFail = verdict.expectedToFail && { ...verdict.expectedToFail, rejected: all.every((v) => v.expectedToFail?.rejected) };
  return { ...verdict, targets, problems, pass: verdict.expectedToFail ? false : pass, ...(expectedToFail ? { expectedToFail } : {}) };
}

function combineTarget(target: TargetResult, across: TargetResult[]): TargetResult {
  const ratios = across.map((t) => t.ratio).filter((r) => r !== undefined);
  if (ratios.length < across.length) return { ...target, pass: false, note: across.find((t) => t.note)?.note ?? 'not measured in every run' };
  const ratioSpread = spread(ratios);
  const required = (target.target.atLeast ?? target.target.atMost)!;
  const measured = ratioSpread.median;
  const { pass, margin } = bounds(target.target, measured, required);
  const values = across.map((t) => t.value).filter((v) => v !== undefined);
  const references = across.map((t) => t.referenceValue).filter((v) => v !== undefined);
  const referenceValue = references.length > 0 ? median(references) : undefined;
  return {
    ...target,
    ratio: measured,
    value: values.length > 0 ? median(values) : undefined,
    referenceValue,
    requiredValue: referenceValue !== undefined && target.target.against !== 'itself' ? required * referenceValue : undefined,
    margin,
    pass,
    spread: ratioSpread,
    noisy: Number.isFinite(margin) && NOISE_SPREADS * ratioSpread.cv > Math.abs(margin),
  };
}
