// Preloaded into every exercise server (`node --import tsx --import this-file server.ts`), so servers stay
// plain code. It tells the harness when the server listens and reports the runtime's own figures over IPC:
// heap, GC time by kind, event-loop delay and active resources. Without an IPC channel it does nothing.
import { createHook } from 'node:async_hooks';
import cluster from 'node:cluster';
import { renameSync, writeFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { constants, monitorEventLoopDelay, performance as nodePerformance, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { getEnvironmentData, isMainThread, setEnvironmentData, threadId } from 'node:worker_threads';
import type { GcKindFigures, GcTotals, HarnessToProbe, IsolateFigures, ProbeToHarness, RuntimeFigures, SourceMapData } from './messages.ts';

const SAMPLE_INTERVAL_MS = Number(process.env.HOTPATH_SAMPLE_MS ?? 1000);
/** How often each isolate writes its figures for the harness (scripts/isolate-figures.ts). */
const ISOLATE_FIGURES_MS = 200;

type Send = (message: ProbeToHarness) => void;

/**
 * The IPC channel's send as it was when the probe loaded, before any of the server's code: a server that
 * replaces process.send cannot change the figures on their way to the harness.
 */
const ipcSend = process.send?.bind(process);

function sendOverIpc(message: ProbeToHarness): void {
  if (process.connected) ipcSend?.(message);
}

function reportListening(send: Send): void {
  const originalListen = net.Server.prototype.listen;
  net.Server.prototype.listen = function listen(this: net.Server, ...args: unknown[]) {
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') {
        send({ type: 'listening', port: address.port, address: address.address });
      }
    });
    return (originalListen as (...a: unknown[]) => net.Server).apply(this, args);
  } as typeof net.Server.prototype.listen;
}

/**
 * In a cluster (node:cluster) the workers call listen(), and the primary, the harness's child, holds the
 * socket itself only in round-robin mode (not Windows' default): the primary reports each worker's
 * listening, in every mode; the harness takes the first on its port.
 */
function reportClusterListening(send: Send): void {
  cluster.on('listening', (_worker, address) => {
    if (address.port) send({ type: 'listening', port: address.port, address: address.address ?? '127.0.0.1' });
  });
}

/** Counts live async resources by type (not promises, which would cost too much), for the peak. */
function countAsyncResources(): () => Record<string, number> {
  const typeOf = new Map<number, string>();
  const live: Record<string, number> = {};
  createHook({
    init(asyncId, type) {
      if (type === 'PROMISE') return;
      typeOf.set(asyncId, type);
      live[type] = (live[type] ?? 0) + 1;
    },
    destroy(asyncId) {
      const type = typeOf.get(asyncId);
      if (type === undefined) return;
      typeOf.delete(asyncId);
      live[type]! -= 1;
    },
  }).enable();
  return () => live;
}

/** Raises each type's peak to what is live now. */
function raisePeaks(peaks: Record<string, number>, now: Record<string, number>): void {
  for (const [type, count] of Object.entries(now)) if (count > (peaks[type] ?? 0)) peaks[type] = count;
}

/**
 * A full collection when the harness asks, and the heap it leaves: what is still alive. The doctor asks at
 * the start and the end of its measured phase; between full collections, garbage promoted to the old
 * generation reads like a leak. `gc` comes from a fresh context, so the server's global does not gain one.
 */
function collectFully(): { heapUsed: number; ms: number } {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const start = performance.now();
  gc();
  const ms = performance.now() - start;
  return { heapUsed: getHeapStatistics().used_heap_size, ms };
}

/**
 * V8's other young-generation collector, which a flag puts in the scavenger's place (--minor-mc on Node 20,
 * --minor-ms later): a minor collection too, though Node's constants do not name its kind.
 */
const MINOR_MARK_SWEEP = 2;

/** The kind of a GC performance entry, as the figures count it. */
function gcKind(entry: PerformanceEntry): keyof GcTotals {
  const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
  if (kind === constants.NODE_PERFORMANCE_GC_MINOR || kind === MINOR_MARK_SWEEP) return 'minor';
  return kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : 'other';
}

const emptyGc = (): GcTotals => ({ minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 }, other: { count: 0, ms: 0 } });

/**
 * Adds each collection to the buckets `totals()` returns (asked anew each time: a reset replaces them), then
 * tells `collected` the heap it left: read as the observer hears of the collections, a moment after the
 * last, so give or take a few hundred KB allocated since.
 */
function observeGc(totals: () => GcTotals, collected: (heapAfter: number) => void): PerformanceObserver {
  const observer = new PerformanceObserver((list) => {
    const gc = totals();
    for (const entry of list.getEntries()) {
      const bucket = gc[gcKind(entry)];
      bucket.count += 1;
      bucket.ms += entry.duration;
    }
    collected(getHeapStatistics().used_heap_size);
  });
  observer.observe({ entryTypes: ['gc'] });
  return observer;
}

function startFigures(): { figures(): RuntimeFigures; reset(): void; sampled(): void; collect(): number } {
  const asyncResources = process.env.HOTPATH_ASYNC_RESOURCES === '1' ? countAsyncResources() : undefined;
  let activePeak: Record<string, number> = {};
  let pendingPeak: Record<string, number> = {};
  let gc = emptyGc();
  // The full collections the harness asked for: not the server's own cost, so left out of its GC figures.
  let forced = { count: 0, ms: 0 };
  let since = performance.now();
  // The heap as the collections left it: the lowest since the last sample, and the last collection's.
  let heapLow: number | undefined;
  let heapAfterLast: number | undefined;
  const RESOLUTION_MS = 10;
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();

  observeGc(
    () => gc,
    (heap) => {
      heapAfterLast = heap;
      if (heapLow === undefined || heap < heapLow) heapLow = heap;
    },
  );

  // The histogram records each whole timer interval; the delay is what exceeds the resolution.
  const ms = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);
  return {
    figures() {
      const wallMs = performance.now() - since;
      const share = (b: { count: number; ms: number }): GcKindFigures => ({ ...b, share: wallMs > 0 ? b.ms / wallMs : 0 });
      const major = { count: Math.max(0, gc.major.count - forced.count), ms: Math.max(0, gc.major.ms - forced.ms) };
      const memory = process.memoryUsage();
      const activeResources: Record<string, number> = {};
      for (const type of process.getActiveResourcesInfo()) activeResources[type] = (activeResources[type] ?? 0) + 1;
      raisePeaks(activePeak, activeResources);
      if (asyncResources) raisePeaks(pendingPeak, asyncResources());
      return {
        wallMs,
        heapUsed: memory.heapUsed,
        ...(heapAfterLast !== undefined ? { heapAfterGc: heapLow ?? heapAfterLast } : {}),
        heapTotal: memory.heapTotal,
        rss: memory.rss,
        gc: { minor: share(gc.minor), major: share(major), other: share(gc.other) },
        eventLoopDelay: {
          mean: ms(delay.mean),
          p50: ms(delay.percentile(50)),
          p90: ms(delay.percentile(90)),
          p99: ms(delay.percentile(99)),
          max: ms(delay.max),
        },
        activeResources,
        activeResourcesPeak: { ...activePeak },
        ...(asyncResources ? { pendingPeak: { ...pendingPeak } } : {}),
      };
    },
    reset() {
      activePeak = {};
      pendingPeak = {};
      gc = emptyGc();
      forced = { count: 0, ms: 0 };
      since = performance.now();
      delay.reset();
    },
    /** A sample went out: the next one's heap low counts from here. */
    sampled() {
      heapLow = undefined;
    },
    collect() {
      const { heapUsed, ms } = collectFully();
      forced = { count: forced.count + 1, ms: forced.ms + ms };
      return heapUsed;
    },
  };
}

/** The source maps Node holds for these files if they were loaded (tsx transpiles with them), by file URL. */
function loadedSourceMaps(files: string[]): Record<string, SourceMapData> {
  const maps: Record<string, SourceMapData> = {};
  for (const file of files) {
    const url = pathToFileURL(file).href;
    const payload = findSourceMap(url)?.payload as SourceMapData | undefined;
    if (payload) maps[url] = { version: payload.version, sources: payload.sources, names: payload.names, mappings: payload.mappings, sourceRoot: payload.sourceRoot };
  }
  return maps;
}

/**
 * Every isolate of the server writes its figures so far to a file of its own in the folder the harness
 * names: the process the harness started, each cluster worker (whose IPC channel leads to its primary, not
 * to the harness) and every worker thread of either (which has no channel at all). The harness sees each
 * process's event loop apart from these files, and adds the other isolates' GC and heap to the reporting
 * probe's, so that work moved to a worker is still counted (scripts/isolate-figures.ts).
 */
function writeIsolateFigures(folder: string, reporting: boolean): void {
  const file = path.join(folder, `${process.pid}-${threadId}.json`);
  const gc = emptyGc();
  let heapAfterGc: number | undefined;
  const observer = observeGc(
    () => gc,
    (heap) => (heapAfterGc = heap),
  );
  // The worker threads it starts, each of which should write a file too: one that does not (started
  // without the probe's preloads) would hide its GC and heap, and the harness says so.
  const threads: Array<{ thread: number; at: number }> = [];
  process.on('worker', (worker) => {
    threads.push({ thread: worker.threadId, at: Date.now() });
    write();
  });
  const timer = setInterval(write, ISOLATE_FIGURES_MS).unref();
  function write() {
    const { idle, active } = nodePerformance.eventLoopUtilization();
    const heap = getHeapStatistics();
    const figures: IsolateFigures = {
      pid: process.pid,
      thread: threadId,
      worker: cluster.isWorker,
      reporting,
      idle,
      active,
      gc,
      heapUsed: heap.used_heap_size,
      heapTotal: heap.total_heap_size,
      ...(heapAfterGc !== undefined ? { heapAfterGc } : {}),
      ...(threads.length > 0 ? { threads } : {}),
    };
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(figures));
      renameSync(`${file}.tmp`, file); // whole or not at all for a reader
    } catch {
      clearInterval(timer); // the folder is gone: the harness no longer looks
      observer.disconnect();
    }
  }
  write();
}

/**
 * This isolate's probe reports to the harness: the main thread of the first Node process the harness
 * started (its child, or the one its shell command runs). That process claims HOTPATH_REPORTS before the
 * server's code runs, so a process the server forks, whose IPC channel leads to the server, does not.
 */
const reportsOverIpc = Boolean(process.send) && process.env.HOTPATH_PROBE === '1' && process.env.HOTPATH_REPORTS === '1' && !cluster.isWorker && isMainThread;
if (reportsOverIpc) delete process.env.HOTPATH_REPORTS;

/**
 * Where this isolate writes its figures: from the environment, or, in a worker thread started with an
 * environment of its own (`new Worker(file, { env: {} })`), from the data every worker gets a copy of.
 */
const ISOLATE_FOLDER_KEY = 'hotpath-isolate-figures';
const isolateFolder =
  process.env.HOTPATH_PROBE === '1' && process.env.HOTPATH_ISOLATE_FIGURES ? process.env.HOTPATH_ISOLATE_FIGURES : isMainThread ? undefined : (getEnvironmentData(ISOLATE_FOLDER_KEY) as string | undefined);
if (isolateFolder) {
  setEnvironmentData(ISOLATE_FOLDER_KEY, isolateFolder);
  writeIsolateFigures(isolateFolder, reportsOverIpc);
}

// A cluster worker's IPC channel leads to its primary, not to the harness: a worker reports nothing and
// answers nothing (its figures are not the harness's), and leaves its channel as the cluster set it up
// (unreferenced, the worker would exit before it listens).
/**
 * Reports the server's listening and, every HOTPATH_SAMPLE_MS, its figures through `send`; with
 * `resetAfterEachSample`, each sample covers the time since the one before. The harness's channel below
 * uses it, and so does the probe a service loads on its own (standalone.js), which writes to a file.
 */
export function startReporting(send: Send, options: { resetAfterEachSample?: boolean } = {}): ReturnType<typeof startFigures> {
  reportListening(send);
  reportClusterListening(send);
  const runtime = startFigures();
  setInterval(() => {
    send({ type: 'sample', figures: runtime.figures() });
    runtime.sampled();
    if (options.resetAfterEachSample) runtime.reset();
  }, SAMPLE_INTERVAL_MS).unref();
  return runtime;
}

if (reportsOverIpc) {
  const send = sendOverIpc;
  const runtime = startReporting(send);
  let lastUtilization = nodePerformance.eventLoopUtilization();
  process.on('message', (message: HarnessToProbe) => {
    if (message?.type === 'reset') runtime.reset();
    if (message?.type === 'snapshot') send({ type: 'snapshot', id: message.id, figures: runtime.figures() });
    if (message?.type === 'utilization') {
      const now = nodePerformance.eventLoopUtilization();
      send({ type: 'utilization', id: message.id, value: nodePerformance.eventLoopUtilization(now, lastUtilization).utilization });
      lastUtilization = now;
    }
    if (message?.type === 'collect') send({ type: 'collected', id: message.id, heapUsed: runtime.collect() });
    if (message?.type === 'sourceMaps') send({ type: 'sourceMaps', id: message.id, maps: loadedSourceMaps(message.files) });
    if (message?.type === 'exit') process.exit(0);
  });
  // The probe must not keep a server alive, and a server must not outlive the harness that started it.
  process.channel?.unref();
  process.on('disconnect', () => process.exit(0));
  // A harness that died while this server was still loading has already closed the channel: no event comes.
  if (!process.connected) process.exit(0);
}
