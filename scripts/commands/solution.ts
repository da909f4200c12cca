import { readFileSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import type { Exercise } from '../exercises.ts';
import { bold, dim, green, red } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { exerciseProgress, readProgress, updateExercise } from '../progress.ts';

/** Shows each stage: what it changes, and its diff against the stage before (the shipped file for stage 1). */
export function solution(exercise: Exercise, force: boolean): number {
  const { id, stages } = exercise.manifest;
  const progress = exerciseProgress(readProgress().progress, id);
  if (!progress.passed && !force) {
    process.stderr.write(
      `The solution of ${id} unlocks once your server passes: npm run workshop -- verify ${id.slice(0, 2)}\n` +
        `To see it anyway: npm run workshop -- solution ${id.slice(0, 2)} --force\n`,
    );
    return 1;
  }
  updateExercise(id, (p) => ({ ...p, solutionShown: true }));
  let previous = exercise.shippedFile;
  stages.forEach((stage, index) => {
    const file = exercise.stageFile(index + 1);
    process.stdout.write(`${bold(`Stage ${index + 1}: ${stage.title}`)}  ${dim(relativeToRoot(file))}\n${stage.changes}\n\n`);
    const patch = createTwoFilesPatch(relativeToRoot(previous), relativeToRoot(file), readFileSync(previous, 'utf8'), readFileSync(file, 'utf8'));
    for (const line of patch.split('\n').slice(2)) {
      process.stdout.write(`${line.startsWith('+') ? green(line) : line.startsWith('-') ? red(line) : line}\n`);
    }
    previous = file;
  });
  process.stdout.write(dim(`Measured figures for every stage: solutions/${id}/README.md, or run them: npm run workshop -- demo ${id.slice(0, 2)}\n`));
  return 0;
}
