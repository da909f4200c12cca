import { benchProgress } from '../bench-progress.ts';
import { runBench, specFor, stretchSpecs, verifyChoices } from '../bench.ts';
import { runBenchRepeated } from '../repeat.ts';
import type { Exercise } from '../exercises.ts';
import { bold, green, ratio } from '../format.ts';
import { updateExercise } from '../progress.ts';
import { renderJson, renderReport } from '../report.ts';
import type { RunReport } from '../result.ts';
import type { Target } from '../manifest.ts';
import { UsageError } from '../usage-error.ts';
import { cannotJudgeHere, stretchStage } from '../verdict.ts';

export interface VerifyOptions {
  json?: boolean;
  nodeFlags?: string[];
  /** Measure this many times; the verdict is on the median (see repeat.ts). */
  runs?: number;
  /** Hold the file to the last reference stage's targets instead of the goal (`--stretch`). */
  stretch?: boolean;
}

/** Correctness probe, load, verdict for the trainee's file; records a pass. */
export async function verify(exercise: Exercise, options: VerifyOptions = {}): Promise<RunReport> {
  const id = exercise.manifest.id.slice(0, 2);
  const stretch = options.stretch ? stretchStage(exercise.manifest) : undefined;
  if (options.stretch && stretch === undefined) {
    throw new UsageError(`exercise ${id} has no stretch targets: its goal is what its last reference stage reaches. Plain "verify ${id}" judges it.`);
  }
  const targets = stretch !== undefined ? exercise.manifest.stages[stretch - 1]!.targets : exercise.manifest.goal;
  const bench = { onEvent: benchProgress(), extraNodeFlags: options.nodeFlags };
  // A server that answers wrong fails at once, before any load is spent on the references.
  const precheck = await runBench(exercise, [specFor(exercise, 'mine')], { ...bench, checkOnly: true });
  // A goal this machine cannot judge (too few cores for what the fix does) is said before any load is spent.
  const cannot = targets.map((target) => cannotJudgeHere(target)).find((why) => why !== undefined);
  if (precheck.pass && cannot) {
    const report: RunReport = { ...precheck, verdicts: [{ label: 'mine', pass: false, targets: [], problems: [], cannotJudge: cannot }], pass: false, tooClose: true };
    process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
    if (!options.json) process.stdout.write('\nYour server answers correctly; run verify on a machine with more cores to judge its speed.\n');
    return report;
  }
  const specs = stretch !== undefined ? stretchSpecs(exercise, stretch) : verifyChoices(exercise).map((choice) => specFor(exercise, choice));
  const report = precheck.pass ? await runBenchRepeated(exercise, specs, bench, options.runs ?? 1) : precheck;
  process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
  if (!report.pass && !options.json) process.stdout.write(`\n${closingAdvice(report, precheck)} Stuck? npm run workshop -- hint ${id}\n`);
  if (report.pass && stretch !== undefined) {
    if (!options.json) process.stdout.write(`\n${green(bold('Stretch reached.'))} Your file meets what the reference's last stage meets.\n`);
  } else if (report.pass) {
    updateExercise(exercise.manifest.id, (p) => ({ ...p, passed: true, passedAt: p.passedAt ?? new Date().toISOString() }));
    if (!options.json) {
      process.stdout.write(`\n${green(bold('Solved.'))} See how the reference stages did it: npm run workshop -- solution ${id}\n`);
      const further = stretchStage(exercise.manifest);
      if (further !== undefined) process.stdout.write(stretchText(exercise.manifest.stages[further - 1]!.targets, further, id));
    }
  }
  return report;
}

/** What `verify` says after a verdict that is not a pass: why, in one sentence, from the run and its probe before the load. */
export function closingAdvice(report: RunReport, precheck: RunReport): string {
  const mine = report.verdicts.find((v) => v.label === 'mine' && !v.symptom);
  if (mine && mine.problems.length > 0) return 'It answered the probe before the load, but not what the load or the checks after it needed: see the ✗ lines above.';
  if (!precheck.pass) return precheck.servers[0]?.failure ? 'It did not run: see the reason and what it printed above.' : 'It answers wrong: see the ✗ lines above.';
  // A floor the work must keep, missed: not a speed still to reach.
  const floor = mine?.targets.find((t) => !t.pass && !t.tooClose && t.target.whenMissed);
  return floor ? floor.target.whenMissed! : 'It answers correctly but has not reached the target yet.';
}

/** After a pass: what the reference's last stage reaches beyond the goal, and how to measure against it. */
export function stretchText(targets: Target[], stage: number, id: string): string {
  const of = (target: Target) =>
    target.against === 'previous' ? `reference stage ${stage - 1}'s` : target.against === 'ceiling' ? "the ceiling's (the bare framework)" : target.against === 'broken' ? "the broken server's" : 'its own';
  const lines = targets.map((t) => `  ${t.metric.name} ${t.atLeast !== undefined ? `≥ ${ratio(t.atLeast)}` : `≤ ${ratio(t.atMost ?? 0)}`} ${of(t)}`);
  return `\nFurther: the reference's stage ${stage} reaches\n${lines.join('\n')}\nMeasure yours against it in the same run: npm run workshop -- verify ${id} --stretch\n`;
}
