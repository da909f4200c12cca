// Finds the exercises, loads and validates their manifests, and resolves the ids a user types.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { validateManifest, type ExerciseDeclaration, type ExerciseManifest, type SolutionDeclaration } from './manifest.ts';
import { currentIdOf } from './former-ids.ts';
import { EXERCISES_DIR, SOLUTIONS_DIR } from './paths.ts';
import { nearest } from './suggest.ts';
import { UsageError } from './usage-error.ts';

export interface Exercise {
  manifest: ExerciseManifest;
  /** exercises/<id> */
  dir: string;
  /** solutions/<id> */
  solutionsDir: string;
  /** The trainee's file. */
  serverFile: string;
  shippedFile: string;
  /** Undefined when the exercise has no ceiling server. */
  ceilingFile?: string;
  stageFile(stage: number): string;
}

export function exerciseFolders(dir = EXERCISES_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^\d{2}-/.test(entry.name) && existsSync(path.join(dir, entry.name, 'exercise.ts')))
    .map((entry) => entry.name)
    .sort();
}

/**
 * An exercise's manifest: its declaration (exercises/<id>/exercise.ts, in the trainee's folder) with its
 * stages, hints and profile answer (solutions/<id>/stages.ts, which names the fix).
 */
export async function loadExercise(id: string): Promise<Exercise> {
  const dir = path.join(EXERCISES_DIR, id);
  const solutionsDir = path.join(SOLUTIONS_DIR, id);
  const declaration = ((await import(pathToFileURL(path.join(dir, 'exercise.ts')).href)) as { default?: ExerciseDeclaration }).default;
  if (!declaration) throw new Error(`exercises/${id}/exercise.ts has no default export (export default defineExercise({...}))`);
  const stagesFile = path.join(solutionsDir, 'stages.ts');
  if (!existsSync(stagesFile)) throw new Error(`solutions/${id}/stages.ts is missing: it declares the exercise's stages and hints (export default defineSolution({...}))`);
  const solution = ((await import(pathToFileURL(stagesFile).href)) as { default?: SolutionDeclaration }).default;
  if (!solution) throw new Error(`solutions/${id}/stages.ts has no default export (export default defineSolution({...}))`);
  const manifest: ExerciseManifest = { ...declaration, ...solution };
  const problems = validateManifest(manifest);
  if (manifest.id !== id) problems.push(`id "${manifest.id}" differs from its folder "${id}"`);
  const exercise: Exercise = {
    manifest,
    dir,
    solutionsDir,
    serverFile: path.join(dir, manifest.serverFile),
    shippedFile: path.join(solutionsDir, manifest.shippedFile),
    ceilingFile: manifest.ceilingFile ? path.join(dir, manifest.ceilingFile) : undefined,
    stageFile: (stage) => path.join(solutionsDir, manifest.stages[stage - 1]!.file),
  };
  const files = [exercise.serverFile, exercise.shippedFile, ...(exercise.ceilingFile ? [exercise.ceilingFile] : []), ...manifest.stages.map((_, i) => exercise.stageFile(i + 1))];
  for (const file of files) if (!existsSync(file)) problems.push(`missing file ${path.relative(path.dirname(EXERCISES_DIR), file)}`);
  if (problems.length > 0) throw new Error(`exercises/${id}/exercise.ts with solutions/${id}/stages.ts is not valid:\n- ${problems.join('\n- ')}`);
  return exercise;
}

export async function loadAllExercises(): Promise<Exercise[]> {
  return Promise.all(exerciseFolders().map((id) => loadExercise(id)));
}

/**
 * Accepts "01", "1" and the name ("seed-service-slows-down") or the whole folder name, and a former id
 * for one release (former-ids.ts): `onFormerId` hears of it, for the note.
 */
export function resolveExerciseId(input: string, ids = exerciseFolders(), onFormerId?: (input: string, id: string) => void): string {
  const wanted = input.trim().toLowerCase();
  const match = ids.find((id) => {
    const [number, ...slug] = id.split('-');
    return id === wanted || number === wanted || (/^\d+$/.test(wanted) && Number(number) === Number(wanted)) || slug.join('-') === wanted;
  });
  if (match) return match;
  const current = currentIdOf(wanted);
  if (current && ids.includes(current)) {
    onFormerId?.(input, current);
    return current;
  }
  const guess = nearest(wanted, ids.flatMap((id) => [id, id.slice(3)]));
  const known = ids.length > 0 ? ` Exercises: ${ids.join(', ')}.` : '';
  throw new UsageError(`unknown exercise "${input}".${guess ? ` Did you mean "${guess}"?` : ''}${known}`);
}
