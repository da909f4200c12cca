import type { RunningServer } from './server-process.ts';

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
