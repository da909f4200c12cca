import type { Exercise } from '../exercises.ts';
import { bold, dim } from '../format.ts';
import { exerciseProgress, readProgress, updateExercise } from '../progress.ts';

/** Shows the hints seen so far plus the next one; hints go from gentle to explicit. */
export function hint(exercise: Exercise): number {
  const { hints, id } = exercise.manifest;
  const shown = exerciseProgress(readProgress().progress, id).hintsShown;
  const next = Math.min(shown + 1, hints.length);
  updateExercise(id, (p) => ({ ...p, hintsShown: next }));
  hints.slice(0, next).forEach((text, i) => {
    const label = `Hint ${i + 1} of ${hints.length}`;
    process.stdout.write(`${i === next - 1 ? bold(label) : dim(label)}\n${i === next - 1 ? text : dim(text)}\n\n`);
  });
  if (next === hints.length) process.stdout.write(dim(`That was the last hint. The reference solution: npm run workshop -- solution ${id.slice(0, 2)} --force\n`));
  return 0;
}
