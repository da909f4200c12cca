import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { specFor, type ServerSpec } from '../scripts/bench.ts';
import type { Exercise } from '../scripts/exercises.ts';
import { relativeToRoot } from '../scripts/paths.ts';

export const TEST_DIR = path.dirname(fileURLToPath(import.meta.url));
export const fixture = (name: string) => path.join(TEST_DIR, 'fixtures', 'servers', name);

/** True while a process with this pid exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie still answers kill(0); it is dead for our purposes.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** The pristine shipped file judged as if it were the trainee's (author check, known-wrong fixes). */
export function shippedAsMine(exercise: Exercise): ServerSpec {
  const mine = specFor(exercise, 'mine');
  return { run: { ...mine.run, label: 'mine', title: 'the shipped file, as a trainee gets it', file: relativeToRoot(exercise.shippedFile) }, absoluteFile: exercise.shippedFile };
}
