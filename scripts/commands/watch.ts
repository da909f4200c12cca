import { watch as watchFiles } from 'node:fs';
import path from 'node:path';
import type { Exercise } from '../exercises.ts';
import { bold, dim } from '../format.ts';
import { relativeToRoot } from '../paths.ts';
import { verify } from './verify.ts';

/** Verifies the trainee's file now and again on every save, like rustlings' watch mode, until Ctrl-C. */
export async function watch(exercise: Exercise, nodeFlags: string[] = []): Promise<number> {
  const file = relativeToRoot(exercise.serverFile);
  let running = false;
  let again = false;
  let debounce: NodeJS.Timeout | undefined;

  const verifyNow = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    do {
      again = false;
      process.stdout.write(`\n${bold(`── verifying ${file} · ${new Date().toLocaleTimeString()} ──`)}\n`);
      try {
        await verify(exercise, { nodeFlags });
      } catch (error) {
        process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
      }
    } while (again);
    running = false;
    process.stdout.write(dim(`\nWatching ${file}: save it to verify again. Hints: npm run workshop -- hint ${exercise.manifest.id.slice(0, 2)}. Ctrl-C stops.\n`));
  };

  watchFiles(exercise.dir, (_event, name) => {
    if (name !== path.basename(exercise.serverFile)) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => void verifyNow(), 300);
  });
  await verifyNow();
  return new Promise<number>(() => {});
}
