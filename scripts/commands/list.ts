import type { Exercise } from '../exercises.ts';
import { bold, dim, green, table } from '../format.ts';
import { exerciseProgress, readProgress } from '../progress.ts';

/** The first exercise not yet passed, if any. */
export function nextExercise(exercises: Exercise[]): Exercise | undefined {
  const { progress } = readProgress();
  return exercises.find((e) => !exerciseProgress(progress, e.manifest.id).passed);
}

export function list(exercises: Exercise[], options: { watchingNext?: boolean } = {}): number {
  const { progress, warning } = readProgress();
  if (warning) process.stderr.write(`${warning}\n`);
  const next = nextExercise(exercises);
  const rows = exercises.map((e) => {
    const p = exerciseProgress(progress, e.manifest.id);
    const status = p.passed ? green('passed') : p.hintsShown > 0 ? `${p.hintsShown} hint(s) seen` : dim('not yet');
    return [e === next ? bold('→') : ' ', e.manifest.id, e.manifest.title, e.manifest.caseStudy.company, status];
  });
  process.stdout.write(`${table(['', 'exercise', 'title', 'case study', 'status'], rows)}\n\n`);
  if (next) {
    const id = next.manifest.id.slice(0, 2);
    const then = options.watchingNext ? 'Watching its server.ts now.' : `Then: npm run workshop -- watch ${id}`;
    process.stdout.write(`Next: ${bold(next.manifest.id)}. Read exercises/${next.manifest.id}/README.md. ${then}\n`);
  } else {
    process.stdout.write(green('Every exercise passed.\n'));
  }
  return 0;
}
