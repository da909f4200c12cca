// Judges each server of a run against its targets, as ratios to references measured in the same run.
import { availableParallelism } from 'node:os';
import { stageHoldsHere, targetRecord, type ExerciseManifest, type Target } from './manifest.ts';
import type { Metric } from './metric.ts';
import type { Reference, ServerRun, ServerVerdict, TargetRecord, TargetResult } from './result.ts';
import { answerProblems } from './answers.ts';
import { beforeListeningProblem } from './before-listening.ts';
import { betweenTurnsProblem } from './between-turns.ts';
import { othersInTurnsProblem } from './others-during-turns.ts';
import { median, medianInterval } from './stats.ts';

/** A server's value of one figure with its unit, or undefined when the run did not measure it. */
export function figureOf(metric: Metric, run: ServerRun): string | undefined {
  const value = metric.read(run);
  return value === undefined || !Number.isFinite(value) ? undefined : metric.format(value);
}

/** The metrics a manifest's targets are set on, by id: what a result's plain targets name. */
export function metricsOf(manifest: Pick<ExerciseManifest, 'goal' | 'stages' | 'symptom'>): Map<string, Metric> {
  const targets = [...manifest.goal, ...manifest.stages.flatMap((stage) => stage.targets), ...(manifest.symptom ?? [])];
  return new Map(targets.map((target) => [target.metric.id, target.metric]));
}

/** Every figure the targets of these manifests are set on, once each, with what it means (`help figures`). */
export function figureMeanings(metrics: Iterable<Metric>): string[] {
  return [...new Set(metrics)].map((metric) => `${metric.name} (${metric.unit}, ${metric.better} is better): ${metric.means}`);
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
  const records = (targets: Target[]) => JSON.stringify(targets.map(targetRecord));
  return records(last.targets) === records(manifest.goal) ? undefined : manifest.stages.length;
}

export function findReference(runs: ServerRun[], run: ServerRun, reference: Reference): ServerRun | undefined {
  if (reference === 'itself') return run;
  // `workshop measure` runs its baseline in the shipped server's role.
  if (reference === 'broken' || reference === 'baseline') return runs.find((r) => r.role === 'broken');
  if (reference === 'ceiling') return runs.find((r) => r.role === 'ceiling');
  const stage = run.role === 'mine' ? run.stretch : run.stage;
  if (stage === undefined) return undefined;
  if (stage === 1) return runs.find((r) => r.role === 'broken');
  return runs.find((r) => r.role === 'stage' && r.stage === stage - 1);
}

/**
 * The most CPU a process of the server without the probe may use under load, in cores: a helper that
 * idles (a compiler's service) uses none; one that does the server's work hides its GC and heap.
 */
const UNSEEN_PROCESS_CORES = 0.1;

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
  if (run.unseenThreads) {
    problems.push(
      `worker threads the probe could not see: ${run.unseenThreads.join('; ')} wrote no figures (started without the probe's preloads, e.g. \`execArgv: []\`), so their GC and heap were not counted; start workers with the default execArgv`,
    );
  }
  const unseen = (run.processes ?? []).filter((p) => p.role === 'other' && p.cores > UNSEEN_PROCESS_CORES);
  if (unseen.length > 0) {
    problems.push(
      `processes the probe could not see: ${unseen.map((p) => `pid ${p.pid} used ${p.cores.toFixed(2)} cores`).join('; ')} under load, started without the probe's preloads (a spawn with arguments of its own), so their GC and heap were not counted; start child processes with process.execArgv, as child_process.fork does`,
    );
  }
  const early = beforeListeningProblem(run);
  if (early) problems.push(early);
  const rest = betweenTurnsProblem(run);
  if (rest) problems.push(rest);
  const others = othersInTurnsProblem(run);
  if (others) problems.push(others);
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
export function cannotJudgeHere(target: Pick<TargetRecord, 'needsCores'>, cores = availableParallelism()): string | undefined {
  const needs = target.needsCores;
  if (!needs || cores >= needs.count) return undefined;
  return `the server has ${cores} core${cores === 1 ? '' : 's'} here and this target needs ${needs.count}: ${needs.why}`;
}

export function judgeTarget(runs: ServerRun[], run: ServerRun, target: Target): TargetResult {
  const { metric } = target;
  const record = targetRecord(target);
  const required = (target.atLeast ?? target.atMost)!;
  const name = target.against === 'itself' ? metric.name : `${metric.name} vs ${target.against}`;
  const cannot = cannotJudgeHere(target);
  if (cannot) return { target: record, name, referenceLabel: target.against, pass: false, note: 'cannot be judged here', cannotJudge: cannot };
  if (target.against === 'itself') {
    // The metric is already a ratio of the server's own figures: it is judged as it is.
    const value = metric.read(run);
    const detail = metric.detail?.(run);
    const base = { target: record, name, referenceLabel: run.label, pass: false, ...(detail ? { detail } : {}) };
    if (value === undefined) return { ...base, note: `${run.label} has no ${metric.name} figure` };
    return withShown(metric, { ...base, value, ratio: value, ...bounds(target, value, required) });
  }
  const reference = findReference(runs, run, target.against);
  const base = { target: record, name, referenceLabel: reference?.label ?? target.against, pass: false };
  if (!reference) return { ...base, note: `no ${target.against} server was measured in this run` };
  const referenceValue = metric.read(reference);
  const value = metric.read(run);
  if (referenceValue === undefined || value === undefined) {
    return withShown(metric, { ...base, referenceValue, value, note: `${value === undefined ? run.label : reference.label} has no ${metric.name} figure` });
  }
  if (referenceValue <= 0) {
    return withShown(metric, { ...base, referenceValue, value, note: `${reference.label} measured ${referenceValue} ${metric.unit}; no ratio can be taken` });
  }
  const ratios = metric.perTurn ? roundRatios(metric, run, reference) : [];
  if (ratios.length === 0) {
    const measured = value / referenceValue;
    return withShown(metric, { ...base, referenceValue, value, ratio: measured, requiredValue: required * referenceValue, ...bounds(target, measured, required) });
  }
  // In turns: the median of the per-round ratios, called only when the interval clears the target.
  const measured = median(ratios);
  const interval = medianInterval(ratios);
  const call = callInterval(target, interval.low, interval.high, required);
  return withShown(metric, {
    ...base,
    referenceValue,
    value,
    ratio: measured,
    requiredValue: required * referenceValue,
    margin: bounds(target, measured, required).margin,
    pass: call === 'pass',
    rounds: { ratios, ...interval },
    ...(call === 'too close' ? { tooClose: true } : {}),
  });
}

/**
 * The result with its figures in the metric's unit, as the report shows them: a result is plain data (JSON,
 * the hub's IPC), and the metric's format goes no further than the process that judged it.
 */
export function withShown(metric: Metric, result: TargetResult): TargetResult {
  const show = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? undefined : metric.format(value));
  const shown = { value: show(result.value), referenceValue: show(result.referenceValue), requiredValue: show(result.requiredValue) };
  return { ...result, shown: Object.fromEntries(Object.entries(shown).filter(([, text]) => text !== undefined)) };
}

/** The server's figure over the reference's, round by round (rounds where either has no figure are left out). */
export function roundRatios(metric: Metric, run: ServerRun, reference: ServerRun): number[] {
  if (!run.turns || !reference.turns) return [];
  const ratios: number[] = [];
  for (const turn of run.turns) {
    const other = reference.turns.find((t) => t.round === turn.round);
    if (!other) continue;
    const value = metric.read({ ...run, load: turn.load, runtime: turn.runtime, heap: turn.heap, processes: turn.processes });
    const base = metric.read({ ...reference, load: other.load, runtime: other.runtime, heap: other.heap, processes: other.processes });
    if (value !== undefined && base !== undefined && base > 0) ratios.push(value / base);
  }
  return ratios;
}

/** Pass when the whole interval is on the right side of the target, fail when it is all on the wrong side. */
export function callInterval(target: Pick<TargetRecord, 'atLeast'>, low: number, high: number, required: number): 'pass' | 'fail' | 'too close' {
  if (target.atLeast !== undefined) return low >= required ? 'pass' : high < required ? 'fail' : 'too close';
  return high <= required ? 'pass' : low > required ? 'fail' : 'too close';
}

/**
 * What another round could still change in the run so far, as "server: target" (empty when every verdict
 * is decided): the turns go on while this is not empty. A server with a target too close to call is decided
 * all the same when another target already misses clearly (one miss fails it); a symptom is decided when
 * none of its targets is too close. A target whose server or reference takes no more turns (`done`) cannot
 * change: it does not ask for another round.
 */
export function stillTooClose(manifest: ExerciseManifest, runs: ServerRun[], done: (label: string) => boolean = () => false): string[] {
  const open = (t: TargetResult, label: string) => t.tooClose === true && !done(label) && !done(t.referenceLabel);
  return judge(manifest, runs).flatMap((verdict) => {
    const opened = verdict.targets.filter((t) => open(t, verdict.label)).map((t) => `${verdict.label}: ${t.name}`);
    if (opened.length === 0) return [];
    if (verdict.symptom) return verdict.problems.length === 0 ? opened : [];
    // A stage wrong on purpose never passes, so it is never "too close" itself; but its targets are held
    // all the same (fast, but wrong), so a close one takes more rounds as any other stage's would.
    if (verdict.expectedToFail) return verdict.problems.length === 0 && verdict.targets.every((t) => t.pass || t.tooClose) ? opened : [];
    return verdict.tooClose === true ? opened : [];
  });
}

export function bounds(target: Pick<TargetRecord, 'atLeast'>, measured: number, required: number): { pass: boolean; margin: number } {
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
