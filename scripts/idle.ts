import type { RunningServer } from './server-process.ts';
import { processTreeTicks, TICKS_PER_SECOND } from './machine-load.ts';

/** Waits until the server's event loop is under 10% busy over a quarter second, or `limitMs` at most. */
export async function waitUntilIdle(server: RunningServer, limitMs = 20_000): Promise<void> {
  const until = Date.now() + limitMs;
  await server.utilization(); // starts the interval
  while (Date.now() < until && !server.exit()) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const busy = await server.utilization();
    if (busy === undefined || busy < 0.1) return;
  }
}

/**
 * Waits until the server's processes together use under a tenth of a core over a quarter second, or
 * `limitMs` at most. By CPU time, not the loop's utilization: under --cpu-prof the profiler's sampling
 * interrupts the loop's wait, and an idle loop reads about two thirds busy.
 */
export async function waitUntilQuiet(server: Pick<RunningServer, 'pid' | 'envMarker' | 'exit'>, limitMs: number): Promise<void> {
  const until = Date.now() + limitMs;
  const total = () => [...processTreeTicks(server.pid, server.envMarker).values()].reduce((sum, t) => sum + t, 0);
  let before = total();
  while (Date.now() < until && !server.exit()) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = total();
    if (now - before < 0.1 * 0.25 * TICKS_PER_SECOND) return;
    before = now;
  }
}
