// The messages the injected probe and the harness exchange over the child's IPC channel.

/** The runtime's own figures, accumulated since the last reset. Times in milliseconds. */
export interface RuntimeFigures {
  /** Wall time covered by these figures. */
  wallMs: number;
  heapUsed: number;
  /**
   * The heap as the collections left it: the lowest V8's used heap size read after any collection since
   * the previous sample (the last collection's when none ran since); absent before the first. A leak
   * raises it, and so does garbage promoted to the old generation until a full collection frees it; the
   * young generation's sawtooth does not.
   */
  heapAfterGc?: number;
  heapTotal: number;
  rss: number;
  gc: {
    minor: GcKindFigures;
    major: GcKindFigures;
    /** Incremental marking and weak-callback processing, reported apart by V8. */
    other: GcKindFigures;
  };
  eventLoopDelay: { mean: number; p50: number; p90: number; p99: number; max: number };
  /** `process.getActiveResourcesInfo()` counted by type, e.g. { TCPSocketWrap: 11, Timeout: 2 }. */
  activeResources: Record<string, number>;
  /** The most of each type seen at once in any sample since the reset (samples come once a second). */
  activeResourcesPeak: Record<string, number>;
  /**
   * Only with the manifest's `probe: { asyncResources: true }`: live async resources by async_hooks type,
   * the most seen at once per type since the reset (e.g. QUERYWRAP: c-ares lookups in flight, which
   * getActiveResourcesInfo does not list). Promises are not counted.
   */
  pendingPeak?: Record<string, number>;
}

export interface GcKindFigures {
  count: number;
  ms: number;
  /** ms / wallMs */
  share: number;
}

/** GC so far in one isolate, by kind: counts and milliseconds. */
export type GcTotals = Record<keyof RuntimeFigures['gc'], { count: number; ms: number }>;

/**
 * What each isolate of a server writes to its file (the process the harness started, a cluster worker, a
 * worker thread in either): its event loop's idle and active time so far, ms, and its GC and heap so far.
 */
export interface IsolateFigures {
  pid: number;
  /** worker_threads' threadId: 0 for a process's main thread. */
  thread: number;
  /** A cluster worker (node:cluster), not the process the harness started. */
  worker: boolean;
  /** The isolate whose probe reports to the harness over IPC: its GC and heap come in its own messages. */
  reporting: boolean;
  idle: number;
  active: number;
  gc: GcTotals;
  heapUsed: number;
  heapTotal: number;
  /** V8's used heap as the last collection left it; absent before the first. */
  heapAfterGc?: number;
  /** The worker threads this isolate started, and when (ms since the epoch): each should write a file of its own. */
  threads?: Array<{ thread: number; at: number }>;
}

export type ProbeToHarness =
  | { type: 'listening'; port: number; address: string }
  | { type: 'sample'; figures: RuntimeFigures }
  | { type: 'snapshot'; id: number; figures: RuntimeFigures }
  /** The event loop's utilization (0 to 1) since the previous utilization message. */
  | { type: 'utilization'; id: number; value: number }
  /** V8's used heap right after the full collection the harness asked for, bytes: what is still alive. */
  | { type: 'collected'; id: number; heapUsed: number }
  /** Source maps of the asked files that are loaded (by file URL), without their sources' text. */
  | { type: 'sourceMaps'; id: number; maps: Record<string, SourceMapData> };

/** A source map (version 3) as Node's module.findSourceMap() holds it for a transpiled file. */
export interface SourceMapData {
  version: number;
  sources: string[];
  names: string[];
  mappings: string;
  sourceRoot?: string;
}

export type HarnessToProbe =
  | { type: 'reset' }
  | { type: 'snapshot'; id: number }
  | { type: 'utilization'; id: number }
  /** Run a full collection now (left out of the GC figures) and answer with the heap it leaves. */
  | { type: 'collect'; id: number }
  /** The source maps of these files (absolute paths), for positions in a CPU profile of transpiled TypeScript. */
  | { type: 'sourceMaps'; id: number; files: string[] }
  /** Exit normally (process.exit(0)), so that exit-time output such as --cpu-prof's profile is written. */
  | { type: 'exit' };

export function isProbeMessage(value: unknown): value is ProbeToHarness {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
