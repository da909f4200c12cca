// The probe sees every isolate of a server, not only the main thread of the process the harness started:
// a worker thread's or a forked child's GC and heap are added to the reporting probe's figures
// (scripts/isolate-figures.ts), a thread's file does not take its process's place, a forked child's probe
// keeps off its parent's channel, and a worker thread in TypeScript loads on every Node.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gcSoFar, unseenThreads, withOtherIsolates } from '../scripts/isolate-figures.ts';
import type { GcTotals, IsolateFigures, RuntimeFigures } from '../scripts/probe/messages.ts';
import { liveServerCount, startServer } from '../scripts/server-process.ts';
import { fixture } from './helpers.ts';
import { tempFolder } from './temp-folder.ts';

const folder = tempFolder('hotpath-thread-probe-');

const gc = (minor: number, ms = minor): GcTotals => ({ minor: { count: minor, ms }, major: { count: 0, ms: 0 }, other: { count: 0, ms: 0 } });
const isolate = (pid: number, thread: number, minor: number, extra: Partial<IsolateFigures> = {}): IsolateFigures => ({
  pid, thread, worker: false, reporting: false, idle: 0, active: 0, gc: gc(minor), heapUsed: 10, heapTotal: 20, ...extra,
});
const reported: RuntimeFigures = {
  wallMs: 1000, heapUsed: 100, heapAfterGc: 50, heapTotal: 200, rss: 1000,
  gc: { minor: { count: 2, ms: 4, share: 0.004 }, major: { count: 0, ms: 0, share: 0 }, other: { count: 0, ms: 0, share: 0 } },
  eventLoopDelay: { mean: 0, p50: 0, p90: 0, p99: 0, max: 0 }, activeResources: {}, activeResourcesPeak: {},
};

describe('isolate figures: the other isolates added to the reporting probe', () => {
  it("adds each other isolate's GC since the reset, a newborn's whole, and their heaps; the reporting isolate's file is its own figures, not added", () => {
    const atReset = [isolate(1, 0, 99, { reporting: true }), isolate(1, 1, 10)];
    const now = [isolate(1, 0, 500, { reporting: true }), isolate(1, 1, 40, { heapAfterGc: 7 }), isolate(2, 0, 5, { worker: true })];
    const figures = withOtherIsolates(reported, now, gcSoFar(atReset));
    expect(figures.gc.minor.count).toBe(2 + 30 + 5);
    expect(figures.gc.minor.ms).toBe(4 + 30 + 5);
    expect(figures.gc.minor.share).toBeCloseTo(39 / 1000);
    expect(figures.heapUsed).toBe(100 + 10 + 10);
    expect(figures.heapTotal).toBe(200 + 20 + 20);
    // An isolate that has not collected yet counts with its heap as it is.
    expect(figures.heapAfterGc).toBe(50 + 7 + 10);
    expect(reported.gc.minor.count, 'the probe figures it was given are left as they were').toBe(2);
  });

  it('names the threads an isolate started over 3 s ago that wrote nothing, not a newer one', () => {
    const now = 1_000_000;
    const parent = isolate(7, 0, 1, { reporting: true, threads: [{ thread: 2, at: now - 5000 }, { thread: 3, at: now - 5000 }, { thread: 4, at: now - 1000 }] });
    expect(unseenThreads([parent, isolate(7, 2, 1)], now)).toEqual(['process 7, thread 3']);
    expect(unseenThreads([parent, isolate(7, 2, 1), isolate(7, 3, 1)], now)).toEqual([]);
  });

  it('leaves the figures alone when the server is one isolate', () => {
    expect(withOtherIsolates(reported, [isolate(1, 0, 3, { reporting: true })], new Map())).toBe(reported);
  });
});

describe('server process: a server that forks a child with an IPC channel of its own', () => {
  it("counts the child's scavenges as the server's, and the child's probe sends nothing down the server's channel", async () => {
    const server = await startServer(fixture('forks-a-child.ts'));
    try {
      expect(await (await fetch(server.url)).text()).toBe('200000');
      server.resetFigures();
      for (let i = 0; i < 40; i++) await (await fetch(server.url)).text();
      await new Promise((resolve) => setTimeout(resolve, 1300)); // a second's sample would have come
      expect((await server.snapshot())?.gc.minor.count).toBeGreaterThanOrEqual(10);
      expect(server.output()).not.toContain('not an answer from the child');
    } finally {
      await server.stop();
    }
  }, 30_000);
});

describe('server process: a server with a worker thread in TypeScript', () => {
  it("loads the thread, counts the thread's scavenges and heap as the server's, and sees one process", async () => {
    const server = await startServer(fixture('worker-thread.ts'));
    try {
      expect(await (await fetch(server.url)).text()).toBe('200000');
      server.resetFigures();
      for (let i = 0; i < 40; i++) await (await fetch(server.url)).text();
      // Each isolate writes its figures every 200 ms.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const figures = await server.snapshot();
      // 40 x 200,000 objects fill the young generation again and again; the main thread alone
      // collects once or twice in that time.
      expect(figures?.gc.minor.count).toBeGreaterThanOrEqual(10);
      expect(figures?.gc.minor.ms).toBeGreaterThan(0);
      // The thread's file is its own: the process's event loop is still the main thread's.
      expect([...server.loops().keys()]).toEqual([server.pid]);
      expect(server.loops().get(server.pid)?.thread).toBe(0);
      expect(server.unseenThreads()).toEqual([]);
    } finally {
      await server.stop();
    }
    expect(liveServerCount()).toBe(0);
  }, 30_000);

  it("counts a thread started with an environment of its own (env: {}), and names one started without the probe's preloads", async () => {
    const build = async (url: string) => {
      for (let i = 0; i < 40; i++) expect(await (await fetch(url)).text()).toBe('200000');
      await new Promise((resolve) => setTimeout(resolve, 300));
    };
    const ownEnv = await startServer(fixture('worker-thread.ts'), { env: { WORKER_OPTIONS: 'empty-env' } });
    try {
      ownEnv.resetFigures();
      await build(ownEnv.url);
      expect((await ownEnv.snapshot())?.gc.minor.count).toBeGreaterThanOrEqual(10);
      expect(ownEnv.unseenThreads()).toEqual([]);
    } finally {
      await ownEnv.stop();
    }
    const bare = await startServer(fixture('worker-thread.ts'), { env: { WORKER_OPTIONS: 'no-preloads' } });
    try {
      await build(bare.url);
      // A thread is given 3 s to write its first figures.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      // Its threadId is not 1 where Node's loader hooks run on a thread of their own (Node 20).
      expect(bare.unseenThreads()).toEqual([expect.stringMatching(new RegExp(`^process ${bare.pid}, thread \\d+$`))]);
    } finally {
      await bare.stop();
    }
    expect(liveServerCount()).toBe(0);
  }, 30_000);
});

describe('server process: a server file tsx has not compiled before', () => {
  // Node 22 and 24 run tsx's hooks on the main thread, where esbuild's synchronous compile of a file not
  // in tsx's cache starts a thread of its own without the probe (server-process.ts). On Node 20 the hooks
  // have their own thread, so this holds there either way; `scripts/with-node.sh 24.22.3` runs it there.
  it('is not taken for a server with a thread the probe could not see', async () => {
    const file = path.join(folder(), 'fresh-server.ts');
    writeFileSync(file, `// ${randomUUID()}\nimport http from 'node:http';\nconst answer: string = 'fresh';\nhttp.createServer((_req, res) => res.end(answer)).listen(Number(process.env.PORT), '127.0.0.1');\n`);
    const server = await startServer(file);
    try {
      expect(await (await fetch(server.url)).text()).toBe('fresh');
      // A thread is given 3 s to write its first figures.
      await new Promise((resolve) => setTimeout(resolve, 3300));
      expect(server.unseenThreads()).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);
});
