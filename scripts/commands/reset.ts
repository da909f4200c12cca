import { copyFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import type { Exercise } from '../exercises.ts';
import { relativeToRoot } from '../paths.ts';
import { UsageError } from '../usage-error.ts';

/** Restores the trainee's file to the shipped broken server, after confirmation or with --yes. */
export async function reset(exercise: Exercise, yes: boolean): Promise<number> {
  const target = relativeToRoot(exercise.serverFile);
  if (readFileSync(exercise.serverFile, 'utf8') === readFileSync(exercise.shippedFile, 'utf8')) {
    process.stdout.write(`${target} is already as shipped.\n`);
    return 0;
  }
  if (!yes) {
    if (!process.stdin.isTTY) throw new UsageError(`reset overwrites ${target}; without a terminal to confirm, pass --yes`);
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await prompt.question(`Overwrite ${target} with the shipped broken server? Your changes will be lost. [y/N] `);
    prompt.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      process.stdout.write('Left as it is.\n');
      return 1;
    }
  }
  copyFileSync(exercise.shippedFile, exercise.serverFile);
  process.stdout.write(`${target} is back to the shipped broken server.\n`);
  return 0;
}
