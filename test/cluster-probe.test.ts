// The injected probe in a node:cluster server: the primary reports its workers' listening to the harness;
// the workers, whose IPC channel leads to the primary, stay silent; each process is seen apart (its cores
// and its event loop), and their GC is the server's; stopping the server ends the workers.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ProcessMeter } from '../scripts/process-figures.ts';
import { isPortFree, liveServerCount, startServer, type RunningServer } from '../scripts/server-process.ts';
import { fixture, isAlive } from './helpers.ts';

/** The workers' pids, from the fixture's "worker <pid> listening" lines, once both listen. */
async function bothWorkers(server: RunningServer): Promise<number[]> {
  const pids = () => [...server.output().matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1]));
  await expect.poll(() => pids().length, { timeout: 15_000 }).toBe(2);
  return pids();
}

function getText(url: string, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
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

  it('sees each process apart: one worker busy and one idle, from their own probes and /proc', async () => {
    const server = await startServer(fixture('cluster.ts'));
    let workers: number[] = [];
    try {
      workers = await bothWorkers(server);
      // The primary and both workers write their event loop's figures.
      await expect.poll(() => [...server.loops().keys()].sort(), { timeout: 5000 }).toEqual([server.pid, ...workers].sort());
      const meter = new ProcessMeter(server);
      meter.begin();
      // One keep-alive connection: the primary hands it to one worker, which spins 20 ms per answer.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const answeredBy = new Set<number>();
      for (const end = Date.now() + 1500; Date.now() < end; ) answeredBy.add(Number(await getText(`${server.url}/spin`, agent)));
      agent.destroy();
      await sleep(250); // each probe writes every 200 ms
      const figures = meter.lap();
      expect(answeredBy.size).toBe(1);
      const busy = figures.find((p) => answeredBy.has(p.pid))!;
      const idle = figures.find((p) => p.role === 'worker' && p !== busy)!;
      expect(figures.find((p) => p.role === 'main')?.pid).toBe(server.pid);
      expect(busy.role).toBe('worker');
      expect(busy.utilization).toBeGreaterThan(0.5);
      expect(busy.cores).toBeGreaterThan(0.4);
      expect(idle.utilization).toBeLessThan(0.1);
      expect(idle.cores).toBeLessThan(0.1);
      expect(meter.total().map((p) => p.pid)).toEqual([server.pid, ...[...workers].sort((a, b) => a - b)]);
    } finally {
      await stopAndExpectAllGone(server, workers);
    }
  }, 30_000);

  it("counts the workers' scavenges as the server's, though only the primary reports", async () => {
    const server = await startServer(fixture('cluster.ts'));
    let workers: number[] = [];
    try {
      workers = await bothWorkers(server);
      server.resetFigures();
      for (let i = 0; i < 30; i++) await (await fetch(`${server.url}/alloc`, { headers: { connection: 'close' } })).text();
      await sleep(300); // each probe writes every 200 ms
      // The primary only hands connections on: the young generation fills in the workers.
      expect((await server.snapshot())?.gc.minor.count).toBeGreaterThanOrEqual(8);
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
