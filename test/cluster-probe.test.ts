// The injected probe in a node:cluster server: the primary reports its workers' listening to the harness;
// the workers, whose IPC channel leads to the primary, stay silent; stopping the server ends the workers.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isPortFree, liveServerCount, startServer, type RunningServer } from '../scripts/server-process.ts';
import { fixture, isAlive } from './helpers.ts';

/** The workers' pids, from the fixture's "worker <pid> listening" lines, once both listen. */
async function bothWorkers(server: RunningServer): Promise<number[]> {
  const pids = () => [...server.output().matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1]));
  await expect.poll(() => pids().length, { timeout: 15_000 }).toBe(2);
  return pids();
}

async function stopAndExpectAllGone(server: RunningServer, workers: number[]): Promise<void> {
  await server.stop();
  expect(isAlive(server.pid)).toBe(false);
  await expect.poll(() => workers.filter(isAlive), { timeout: 5000 }).toEqual([]);
  // The kernel frees the port once the last process holding it is gone, a moment after the exits.
  await expect.poll(() => isPortFree(server.port), { timeout: 5000 }).toBe(true);
  expect(liveServerCount()).toBe(0);
}

describe('server process: a node:cluster server', () => {
  it("is ready when a worker listens, reports the primary's figures, and ends every worker on stop", async () => {
    const server = await startServer(fixture('cluster.ts'), { env: { HOTPATH_SAMPLE_MS: '100' } });
    let workers: number[] = [];
    try {
      workers = await bothWorkers(server);
      expect(workers).not.toContain(server.pid);
      // Round-robin: the primary hands connections to its workers in turn, so both answer.
      const answered = new Set<number>();
      for (let i = 0; i < 6; i++) answered.add(Number(await (await fetch(server.url, { headers: { connection: 'close' } })).text()));
      expect([...answered].sort()).toEqual([...workers].sort());

      const figures = await server.snapshot();
      expect(figures?.heapUsed).toBeGreaterThan(0);
      // Samples come every 100 ms here; a worker's would reach the primary, which prints them.
      await sleep(500);
      expect(server.samples.length).toBeGreaterThan(0);
      expect(server.output()).not.toContain('message from worker');
    } finally {
      await stopAndExpectAllGone(server, workers);
    }
  }, 30_000);

  it('is ready too when the workers hold the socket themselves (no round-robin, the default on Windows)', async () => {
    const server = await startServer(fixture('cluster.ts'), { env: { NODE_CLUSTER_SCHED_POLICY: 'none' } });
    let workers: number[] = [];
    try {
      workers = await bothWorkers(server);
      expect(workers).toContain(Number(await (await fetch(server.url)).text()));
    } finally {
      await stopAndExpectAllGone(server, workers);
    }
  }, 30_000);
});
