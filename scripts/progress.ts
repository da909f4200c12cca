// The trainee's progress, kept in a git-ignored file at the repository root. A missing file is a fresh
// start; a corrupt one is set aside (renamed, not deleted) and progress starts again.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { currentIdOf } from './former-ids.ts';
import { ROOT } from './paths.ts';

export interface ExerciseProgress {
  passed: boolean;
  passedAt?: string;
  /** How many hints have been shown. */
  hintsShown: number;
  solutionShown: boolean;
}

export interface Progress {
  version: 1;
  exercises: Record<string, ExerciseProgress>;
}

export function progressFile(): string {
  return process.env.HOTPATH_PROGRESS_FILE ?? path.join(ROOT, '.hotpath-progress.json');
}

export function emptyProgress(): Progress {
  return { version: 1, exercises: {} };
}

/**
 * Whether what names the fix may be shown (stage names, the solution view): after a pass, or once the
 * trainee opened the solution anyway (`solution NN --force`).
 */
export function solutionUnlocked(progress: ExerciseProgress): boolean {
  return progress.passed || progress.solutionShown;
}

export function exerciseProgress(progress: Progress, id: string): ExerciseProgress {
  return progress.exercises[id] ?? { passed: false, hintsShown: 0, solutionShown: false };
}

/** Reads the progress file; never throws. `warning` says what was wrong with a file that could not be used. */
export function readProgress(file = progressFile()): { progress: Progress; warning?: string } {
  if (!existsSync(file)) return { progress: emptyProgress() };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Progress>;
    if (parsed?.version !== 1 || typeof parsed.exercises !== 'object' || parsed.exercises === null) throw new Error('unknown shape');
    const exercises: Record<string, ExerciseProgress> = {};
    for (const [key, value] of Object.entries(parsed.exercises)) {
      // A file written before the exercises were renamed keeps its progress under the new ids.
      const id = currentIdOf(key) ?? key;
      exercises[id] = {
        passed: value?.passed === true,
        passedAt: typeof value?.passedAt === 'string' ? value.passedAt : undefined,
        hintsShown: Number.isInteger(value?.hintsShown) && value.hintsShown >= 0 ? value.hintsShown : 0,
        solutionShown: value?.solutionShown === true,
      };
    }
    return { progress: { version: 1, exercises } };
  } catch (error) {
    const aside = `${file}.corrupt-${Date.now()}`;
    try {
      renameSync(file, aside);
    } catch {
      // Could not move it; it is overwritten on the next save.
    }
    const reason = error instanceof Error ? error.message : String(error);
    return { progress: emptyProgress(), warning: `progress file ${file} could not be read (${reason}); starting afresh, the old file is at ${aside}` };
  }
}

/** Writes through a temporary file and a rename, so a crash mid-write never leaves half a file. */
export function writeProgress(progress: Progress, file = progressFile()): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(progress, null, 2)}\n`);
  renameSync(temporary, file);
}

export function updateExercise(id: string, change: (current: ExerciseProgress) => ExerciseProgress, file = progressFile()): ExerciseProgress {
  const { progress } = readProgress(file);
  const next = change(exerciseProgress(progress, id));
  progress.exercises[id] = next;
  writeProgress(progress, file);
  return next;
}
