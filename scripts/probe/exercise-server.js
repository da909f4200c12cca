// The probe as every exercise server loads it, after tsx: `node --import tsx --import this-file server.ts`.
// JavaScript, because every worker thread runs the same preloads, and on Node 20 tsx's hooks reach no
// worker thread: there a TypeScript file, this probe's or a server's worker, would not load. A worker
// that cannot load it registers tsx for itself first, and then loads as on Node 22 and later.
import { isMainThread } from 'node:worker_threads';

try {
  await import('./inject.ts');
} catch (error) {
  if (isMainThread || error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  const { register } = await import('tsx/esm/api');
  register();
  // Another URL: the loader keeps the first attempt's failure for the first.
  await import('./inject.ts?worker-thread');
}
