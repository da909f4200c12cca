import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeFlagsComment, specFor, type ServerSpec } from '../scripts/bench.ts';
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

/**
 * The tags a known-wrong fix in test/wrong-fixes/NN-slug/ names its failure with: the probe before any load,
 * what the load received or the probe after it, the exercise's after-load check (wrong-fixes.test.ts), or,
 * in the author check's run, where the servers take turns (author.test.ts): a target of the goal it misses
 * (fast, answering right, and still not fixed), the work it did while the others took their turns, or the
 * work it did before it listened (both held to the shipped server's in the same run).
 */
export const WRONG_FIX_TAGS = ['probe', 'under-load', 'after-load', 'verdict', 'between-turns', 'before-listening', 'in-turns'] as const;

/**
 * The tags of known-wrong fixes judged in the author check's run, not in the known-wrong fixes' own.
 * `in-turns`: a problem found after a load in turns, which the known-wrong fixes' busier run cannot show.
 */
export const IN_TURNS_TAGS: readonly WrongFixTag[] = ['verdict', 'between-turns', 'before-listening', 'in-turns'];
export type WrongFixTag = (typeof WRONG_FIX_TAGS)[number];

/** The known-wrong fixes of an exercise, as absolute paths. */
export function wrongFixFiles(id: string): string[] {
  const dir = path.join(TEST_DIR, 'wrong-fixes', id);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f)) : [];
}

/** The file's tag and what it names, e.g. ['under-load', 'the task id repeats an earlier answer's']. */
export function wrongFixTag(file: string): [tag: WrongFixTag, reason: string] | undefined {
  const text = readFileSync(file, 'utf8');
  for (const tag of WRONG_FIX_TAGS) {
    const reason = new RegExp(`^// ${tag}: (.+)$`, 'm').exec(text)?.[1];
    if (reason !== undefined) return [tag, reason];
  }
  return undefined;
}

/** The measured phase a known-wrong fix asks for (`// measured-seconds: <n>`), when it needs its server older than the usual. */
export function wrongFixSeconds(file: string): number | undefined {
  const seconds = /^\/\/ measured-seconds: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1];
  return seconds === undefined ? undefined : Number(seconds);
}

/** The load's rate a known-wrong fix asks for (`// load-rate: <req/s>`), when its server ages by the clock, not by the requests. */
export function wrongFixRate(file: string): number | undefined {
  const rate = /^\/\/ load-rate: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1];
  return rate === undefined ? undefined : Number(rate);
}

/** A known-wrong fix judged as the trainee's file, labelled by its file name. */
export function wrongFixSpec(exercise: Exercise, file: string): ServerSpec {
  const spec = shippedAsMine(exercise);
  const run = { ...spec.run, label: path.basename(file, '.ts'), title: 'a known-wrong fix, judged as yours', file: relativeToRoot(file), nodeFlags: nodeFlagsComment(file) };
  return { run, absoluteFile: file };
}
