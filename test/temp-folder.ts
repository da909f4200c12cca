import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A temporary folder for one test file: made before its first test, removed after its last; call the
 * returned function inside tests and hooks for its path. Made in a hook, not when the file loads: with
 * every test filtered out (-t), vitest runs no hook, and a folder made at load would be left behind.
 */
export function tempFolder(prefix: string): () => string {
  let folder: string | undefined;
  beforeAll(() => {
    folder = mkdtempSync(path.join(tmpdir(), prefix));
  });
  afterAll(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
  });
  return () => {
    if (!folder) throw new Error(`the ${prefix} folder is made before the file's first test`);
    return folder;
  };
}
