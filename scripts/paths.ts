// Where things are, relative to the repository root.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EXERCISES_DIR = path.join(ROOT, 'exercises');
export const SOLUTIONS_DIR = path.join(ROOT, 'solutions');

export function relativeToRoot(file: string): string {
  return path.relative(ROOT, file);
}
