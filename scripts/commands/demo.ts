import { benchProgress } from '../bench-progress.ts';
import { demoChoices, specFor } from '../bench.ts';
import { runBenchRepeated } from '../repeat.ts';
import type { Exercise } from '../exercises.ts';
import { renderJson, renderReport } from '../report.ts';
import type { RunReport } from '../result.ts';

/** For instructors: the broken server, every stage and the ceiling under the same load, side by side. */
export async function demo(exercise: Exercise, options: { json?: boolean; runs?: number } = {}): Promise<RunReport> {
  const specs = demoChoices(exercise).map((choice) => specFor(exercise, choice));
  const report = await runBenchRepeated(exercise, specs, { onEvent: benchProgress() }, options.runs ?? 1);
  process.stdout.write(`${options.json ? renderJson(report) : renderReport(report)}\n`);
  return report;
}
