// What a server does before it listens. The turns meter a server from its first answer on; a server that
// works before it listens (answers made ahead, kept for the load to find) is measured on only part of its
// cost. Its processes' CPU from their start to the moment it listened is recorded, and a server that is
// judged may use, per isolate (each process's main thread and each worker thread), little more than the
// shipped server does (docs/measuring.md).
import type { BeforeListening, ServerRun } from './result.ts';

/** Per isolate: three times the shipped server's, and half a second more (a bigger file to compile, a pool to fill). */
const TIMES_SHIPPED = 3;
const PLUS_SECONDS = 0.5;

/** Sets the most each judged server may use before it listens, from the shipped server's own figure in the run. */
export function judgeBeforeListening(runs: ServerRun[], judged: (run: ServerRun) => boolean): void {
  const shipped = runs.find((r) => r.role === 'broken')?.beforeListening;
  if (!shipped) return;
  const perIsolate = shipped.cpuSeconds / Math.max(1, shipped.isolates);
  for (const run of runs) {
    const before = run.beforeListening;
    if (before && judged(run)) before.atMost = Math.max(1, before.isolates) * (TIMES_SHIPPED * perIsolate + PLUS_SECONDS);
  }
}

/** Why a server failed for what it did before it listened, or undefined. */
export function beforeListeningProblem(run: Pick<ServerRun, 'beforeListening'>): string | undefined {
  const before = run.beforeListening;
  if (before?.atMost === undefined || before.cpuSeconds <= before.atMost) return undefined;
  return (
    `before it listened: its processes used ${before.cpuSeconds.toFixed(1)} s of CPU (${before.isolates} isolate${before.isolates === 1 ? '' : 's'}; ` +
    `at most ${before.atMost.toFixed(1)} s, from the shipped server's): work done before the load, whose cost its turns' figures do not count`
  );
}
