import { benchProgress } from '../bench-progress.ts';
import { runBench, specFor, verifyChoices } from '../bench.ts';
import { runBenchRepeated } from '../repeat.ts';
import type { Exercise } from '../exercises.ts';
import { bold, green } from '../format.ts';
import { updateExercise } from '../progress.ts';
import { renderJson, renderReport } from '../report.ts';
import type { RunReport } from '../result.ts';
import { cannotJudgeHere } from '../verdict.ts';

export interface VerifyOptions {
  json?: boolean;
  nodeFlags?: string[];
  /** Measure this many times; the verdict is on the median (see repeat.ts). */
  runs?: number;
}

/** Correctness probe, load, verdict for the trainee's file; records a pass. */
export async function verify(exercise: Exercise, options: VerifyOptions = {}): Promise<RunReport> {
  const bench = { onEvent: benchProgress(), extraNodeFlags: options.nodeFlags };
  // A server that answers wrong fails at once, before any load is spent on the references.
  const precheck = await runBench(exercise, [specFor(exercise, 'mine')], { ...bench, checkOnly: true });
  // A goal this machine cannot judge (too few cores for what the fix does) is said before any load is spent.
  const cannot = exercise.manifest.goal.map((target) => cannotJudgeHere(target)).find((why) => why !== undefined);
  if (precheck.pass && cannot) {
    const report: RunReport = { ...precheck, verdicts: [{ label: 'mine', pass: false, targets: [], problems: [], cannotJudge: cannot }], pass: false, tooClose: true };
    process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
    if (!options.json) process.stdout.write('\nYour server answers correctly; run verify on a machine with more cores to judge its speed.\n');
    return report;
  }
  const specs = verifyChoices(exercise).map((choice) => specFor(exercise, choice));
  const report = precheck.pass ? await runBenchRepeated(exercise, specs, bench, options.runs ?? 1) : precheck;
  process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
  if (!report.pass && !options.json) {
    const id = exercise.manifest.id.slice(0, 2);
    const mine = precheck.servers[0];
    const advice = precheck.pass
      ? 'It answers correctly but has not reached the target yet.'
      : mine?.failure
        ? 'It did not run: see the reason and what it printed above.'
        : 'It answers wrong: see the ✗ lines above.';
    process.stdout.write(`\n${advice} Stuck? npm run workshop -- hint ${id}\n`);
  }
  if (report.pass) {
    updateExercise(exercise.manifest.id, (p) => ({ ...p, passed: true, passedAt: p.passedAt ?? new Date().toISOString() }));
    if (!options.json) {
      const id = exercise.manifest.id.slice(0, 2);
      process.stdout.write(`\n${green(bold('Solved.'))} See how the reference stages did it: npm run workshop -- solution ${id}\n`);
    }
  }
  return report;
}
