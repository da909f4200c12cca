import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort, isPortFree, liveServerCount, onFreePorts, ServerStartError, startServer } from '../scripts/server-process.ts';
import { processStat } from '../scripts/machine-load.ts';
import { ProcessMeter } from '../scripts/process-figures.ts';
import { fixture, isAlive } from './helpers.ts';

describe('server process', () => {
  it('starts a server on 127.0.0.1, knows when it listens, and frees the port when stopped', async () => {
    const server = await startServer(fixture('answers.ts'));
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(await (await fetch(server.url)).text()).toBe('ok');
    const exit = await server.stop();
    expect(exit.expected).toBe(true);
    expect(isAlive(server.pid)).toBe(false);
    expect(await isPortFree(server.port)).toBe(true);
    expect(liveServerCount()).toBe(0);
  });

  it('reports a server that crashes before it listens, with what it printed', async () => {
    const error = await startServer(fixture('crashes-on-start.ts')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerStartError);
    expect((error as ServerStartError).message).toMatch(/exited \(exit code 1\) before it listened/);
    expect((error as ServerStartError).output).toContain('the database is on fire');
    expect((error as ServerStartError).output).toContain('boom at start-up');
    expect(liveServerCount()).toBe(0);
  });

  it('gives up on a server that never listens, and ends it', async () => {
    const started = Date.now();
    const error = await startServer(fixture('never-listens.ts'), { readyTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerStartError);
    expect((error as Error).message).toMatch(/did not listen .* within 3 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(liveServerCount()).toBe(0);
  });

  it('kills a server that ignores SIGTERM', async () => {
    const server = await startServer(fixture('ignores-sigterm.ts'));
    const exit = await server.stop();
    expect(exit.signal).toBe('SIGKILL');
    expect(server.output()).toContain('ignoring SIGTERM');
    expect(isAlive(server.pid)).toBe(false);
    expect(await isPortFree(server.port)).toBe(true);
  });

  it('notices a server that crashes while it serves', async () => {
    const server = await startServer(fixture('crashes-on-request.ts'));
    await fetch(server.url).catch(() => undefined);
    const exit = await server.exited;
    expect(exit).toMatchObject({ code: 3, expected: false });
    expect(server.output()).toContain('handler failed');
    expect(await isPortFree(server.port)).toBe(true);
  });

  it('ends the processes a server started along with it', async () => {
    const server = await startServer(fixture('spawns-a-child.ts'));
    await expect.poll(() => server.output()).toMatch(/grandchild \d+/);
    const grandchild = Number(/grandchild (\d+)/.exec(server.output())![1]);
    expect(isAlive(grandchild)).toBe(true);
    await server.stop();
    await expect.poll(() => isAlive(grandchild)).toBe(false);
  });

  it('counts and ends the processes a server started outside its group, a detached child and a double-forked orphan', async () => {
    const server = await startServer(fixture('spawns-a-detached-child.ts'));
    await expect.poll(() => server.output(), { timeout: 5000 }).toMatch(/orphan \d+/);
    const detached = Number(/detached (\d+)/.exec(server.output())![1]);
    const orphan = Number(/orphan (\d+)/.exec(server.output())![1]);
    try {
      // The orphan's parent has exited: it is init's now, and only its environment says whose it is.
      await expect.poll(() => processStat(orphan)?.ppid, { timeout: 5000 }).not.toBe(server.pid);
      const meter = new ProcessMeter(server);
      meter.begin();
      expect(await (await fetch(`${server.url}/spin`)).text()).toBe('spun');
      const pids = meter.lap().map((p) => p.pid);
      expect(pids).toEqual(expect.arrayContaining([server.pid, detached, orphan]));
      expect(meter.total().find((p) => p.pid === detached)!.cores).toBeGreaterThan(0.3);
      await server.stop();
      await expect.poll(() => [detached, orphan].filter(isAlive), { timeout: 3000 }).toEqual([]);
    } finally {
      for (const pid of [detached, orphan].filter(isAlive)) process.kill(pid, 'SIGKILL');
    }
  });

  it('counts the CPU of children that started and ended between two readings', async () => {
    const server = await startServer(fixture('short-lived-children.ts'));
    try {
      const meter = new ProcessMeter(server);
      meter.begin();
      const started = performance.now();
      expect(await (await fetch(`${server.url}/burn`)).text()).toBe('ok');
      const seconds = (performance.now() - started) / 1000;
      const main = meter.lap().find((p) => p.role === 'main');
      // Four children of 150 ms of CPU each, none alive at either reading: its own.
      expect(main!.cores * seconds).toBeGreaterThan(0.55);
    } finally {
      await server.stop();
    }
  });

  it('refuses a port that is already taken, with a clear message', async () => {
    const first = await startServer(fixture('answers.ts'));
    const error = await startServer(fixture('answers.ts'), { port: first.port }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(new RegExp(`port ${first.port} .* already in use`));
    await first.stop();
  });

  it('hands out distinct free ports below the ephemeral range, where no client socket takes them', async () => {
    const ports = await Promise.all(Array.from({ length: 200 }, () => freePort()));
    expect(new Set(ports).size).toBe(200);
    for (const port of ports) expect(port).toBeGreaterThanOrEqual(20_000);
    for (const port of ports) expect(port).toBeLessThan(32_768);
  });

  it('starts again on fresh ports when a port was taken before the server listened, and only then', async () => {
    const tried: number[][] = [];
    const started = await onFreePorts(2, async (ports) => {
      tried.push(ports);
      if (tried.length === 1) throw new ServerStartError('exited (exit code 1) before it listened', 'Error: listen EADDRINUSE: address already in use');
      return 'listening';
    });
    expect(started).toBe('listening');
    expect(tried).toHaveLength(2);
    expect(tried[1]).not.toEqual(tried[0]);

    // A start that always fails with `output`: how many times it was tried, and what onFreePorts threw.
    const failing = async (output: string) => {
      let tries = 0;
      const error = await onFreePorts(1, async () => {
        tries++;
        throw new ServerStartError('exited (exit code 1) before it listened', output);
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerStartError);
      return tries;
    };
    expect(await failing('boom at start-up')).toBe(1);
    expect(await failing('listen EADDRINUSE')).toBe(3);
  });

  it('reports runtime figures from the injected probe', async () => {
    const server = await startServer(fixture('answers.ts'));
    server.resetFigures();
    await Promise.all(Array.from({ length: 50 }, () => fetch(server.url).then((r) => r.text())));
    const figures = await server.snapshot();
    await server.stop();
    expect(figures).toBeDefined();
    expect(figures!.heapUsed).toBeGreaterThan(0);
    expect(figures!.heapTotal).toBeGreaterThanOrEqual(figures!.heapUsed);
    expect(figures!.wallMs).toBeGreaterThan(0);
    expect(figures!.activeResources.TCPServerWrap).toBe(1);
    expect(figures!.gc.minor.share).toBeGreaterThanOrEqual(0);
    expect(figures!.eventLoopDelay.p99).toBeGreaterThanOrEqual(0);
  });

  it("counts the young generation's collections as minor when a flag swaps its collector", async () => {
    // Node 20's V8 calls the other young-generation collector minor-mc, later ones minor-ms.
    const flag = Number(process.versions.node.split('.')[0]) >= 22 ? '--minor-ms' : '--minor-mc';
    const server = await startServer(fixture('churns-and-keeps.ts'), { nodeFlags: [flag] });
    try {
      server.resetFigures();
      for (let i = 0; i < 20; i += 1) await fetch(server.url + '/churn').then((r) => r.text());
      const { gc } = (await server.snapshot())!;
      // Most of what churning leaves is the young generation's to collect; "other" keeps the rare
      // incremental-marking or weak-callback entry.
      expect(gc.minor.count, `minor collections under ${flag} (${gc.other.count} of other kinds)`).toBeGreaterThan(3 * gc.other.count);
      expect(gc.minor.count).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });

  it('reports the heap as the last collection left it: memory kept raises it, garbage does not', async () => {
    // A sample every 100 ms: once two have gone by without a collection, the figure is the last collection's.
    const server = await startServer(fixture('churns-and-keeps.ts'), { env: { HOTPATH_SAMPLE_MS: '100' } });
    const ask = async (route: string, times: number) => {
      for (let i = 0; i < times; i += 1) await fetch(server.url + route).then((r) => r.text());
      await sleep(300);
      return (await server.snapshot())!;
    };
    try {
      const start = await ask('/churn', 10);
      expect(start.heapAfterGc, 'collections ran: the heap as the last one left it').toBeGreaterThan(0);
      const churned = await ask('/churn', 20);
      const kept = await ask('/keep', 6);
      const MB = 1e6;
      // Hundreds of MB of garbage move it by less than 10 MB; ~60 MB kept, by more than 30.
      expect(Math.abs(churned.heapAfterGc! - start.heapAfterGc!) / MB).toBeLessThan(10);
      expect((kept.heapAfterGc! - churned.heapAfterGc!) / MB).toBeGreaterThan(30);
    } finally {
      await server.stop();
    }
  });

  it("runs a full collection when asked: kept memory raises the heap it leaves, promoted garbage does not, and its time is not the server's", async () => {
    const server = await startServer(fixture('churns-and-keeps.ts'), { env: { HOTPATH_SAMPLE_MS: '60000' } });
    const get = (route: string) => fetch(server.url + route).then((r) => r.text());
    try {
      const MB = 1e6;
      const start = (await server.collect())!;
      await get('/promote');
      const afterGarbage = (await server.collect())!;
      for (let i = 0; i < 6; i += 1) await get('/keep');
      const afterKeeping = (await server.collect())!;
      // ~40 MB promoted and dropped leaves it within 5 MB; ~60 MB kept raises it by more than 30.
      expect(Math.abs(afterGarbage - start) / MB).toBeLessThan(5);
      expect((afterKeeping - afterGarbage) / MB).toBeGreaterThan(30);
      // Asked for, not the server's own: two full collections after a reset leave its major count at 0.
      server.resetFigures();
      await server.collect();
      await server.collect();
      await sleep(200); // the GC observer hears of them
      const figures = (await server.snapshot())!;
      expect(figures.gc.major.count).toBe(0);
      expect(figures.gc.major.ms).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it("reports the lowest heap a collection left since the previous sample, not only the last one's", async () => {
    // No sample goes out during the test: the low counts from the server's start.
    const server = await startServer(fixture('churns-and-keeps.ts'), { nodeFlags: ['--expose-gc'], env: { HOTPATH_SAMPLE_MS: '60000' } });
    const ask = async (...routes: string[]) => {
      for (const route of routes) await fetch(server.url + route).then((r) => r.text());
      return (await server.snapshot())!;
    };
    try {
      const MB = 1e6;
      const low = await ask('/drop', '/gc');
      const high = await ask('/keep', '/keep', '/keep', '/keep', '/keep', '/keep', '/gc');
      // ~60 MB kept and collected: the heap sits well above the low, but the figure stays at the low.
      expect((high.heapUsed - low.heapAfterGc!) / MB).toBeGreaterThan(30);
      expect(Math.abs(high.heapAfterGc! - low.heapAfterGc!) / MB).toBeLessThan(5);
    } finally {
      await server.stop();
    }
  });
});
