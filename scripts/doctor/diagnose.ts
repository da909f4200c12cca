// The doctor's reading of an observation: which kinds of problem its figures show, each with the
// evidence and the tool to use next. It names kinds and points to tools; it never names a fix. The
// thresholds were set from the nine shipped servers, their final stages and the ceilings, on Node 20 and
// 24 (docs/doctor.md has the figures).
import { median } from '../stats.ts';
import type { Kind } from './kinds.ts';
import type { Observation } from './observe.ts';

export interface Finding {
  kind: Kind;
  /** What the figures show, in a line. */
  title: string;
  evidence: string[];
  /** The tool to use next, and what to look for with it. */
  next: string;
}

/** The figures the doctor judges, from the observation. */
export interface DoctorFigures {
  /** Median req/s of the first third and of the last third of the load. */
  early: number;
  late: number;
  /** CPU milliseconds per answer (all the server's processes) in the first and the last third. */
  costEarly?: number;
  costLate?: number;
  /** Median p99 (ms) of the first and the last third. */
  p99Early?: number;
  p99Late?: number;
  /** Median event-loop utilization of the main thread. */
  utilization?: number;
  /** Median cores used by all the server's processes together, and by each (by pid). */
  cores: number;
  processCores: number[];
  /** A cluster's workers, each apart: median cores and event-loop utilization over the seconds. */
  workers: Array<{ pid: number; cores: number; utilization: number }>;
  delayP99?: number;
  /** Share of wall time in collections (scavenge, mark-compact) and ms of collection per answer. */
  gcShare?: number;
  scavengeShare?: number;
  gcMsPerRequest?: number;
  /** What the heap kept over the measured phase, MB/s: a full collection's heap at its end less at its start. */
  heapMBps?: number;
  /** Active resource types whose count rose over the load: the typical count over its first third and its last. */
  rising: Array<{ type: string; first: number; last: number }>;
  /** Async resources in flight at once (when the exercise counts them) that reached the connections' number. */
  piledUp: Array<{ type: string; peak: number }>;
  requestsPerSecond: number;
}

export const THRESHOLDS = {
  /** The main thread busy at least this share of the time. */
  busy: 0.88,
  /** Event-loop delay p99 (ms) at which a busy loop's turns are long: the work of a request blocks the others. */
  longTurnsMs: 15,
  /** At most these cores for all the server's processes (the thread pool and GC threads add some), with more available. */
  oneCoreAtMost: 1.5,
  /**
   * The cost grew: req/s of the last third at most this share of the first third's, at the same load, and
   * the CPU time per answer up by `costGrewBy` (so a machine that lent the server less CPU is not taken for it).
   */
  slowedTo: 0.6,
  costGrewBy: 1.5,
  /** The heap keeping at least this many MB/s over the measured phase, full collection to full collection. */
  heapMBps: 10,
  /**
   * An active resource type counts as rising when its typical count over the load's last third is at least
   * twice that of its first third and this many more (and twice the connections).
   */
  risingBy: 50,
  /** Collections at least this share of wall time. */
  gcShare: 0.2,
  /**
   * All the server's processes together using less than this much of a core while the load keeps requests
   * in flight. Not 0.5: where system calls cost more, a server waiting on DNS used more than half a core (docs/doctor.md).
   */
  waitingCoresBelow: 0.75,
};

export function figuresOf(o: Observation): DoctorFigures {
  const rates = o.loadSeconds.map((s) => s.requests);
  const third = Math.max(1, Math.floor(rates.length / 3));
  const p99s = o.loadSeconds.map((s) => s.p99);
  const early = median(rates.slice(0, third));
  const late = median(rates.slice(-third));
  const p99Of = (list: Array<number | undefined>) => {
    const known = list.filter((v) => v !== undefined);
    return known.length > 0 ? median(known) : undefined;
  };
  const coresEach = o.serverSeconds.map((s) => Object.values(s.cores).reduce((a, b) => a + b, 0));
  const serverThird = Math.max(1, Math.floor(coresEach.length / 3));
  const costOf = (cores: number[], rate: number) => (cores.length > 0 && rate > 0 ? (1000 * median(cores)) / rate : undefined);
  const costEarly = costOf(coresEach.slice(0, serverThird), early);
  const costLate = costOf(coresEach.slice(-serverThird), late);
  const utilizations = o.serverSeconds.map((s) => s.utilization).filter((u) => u !== undefined);
  const pids = [...new Set(o.serverSeconds.flatMap((s) => Object.keys(s.cores)))];
  const processCores = pids.map((pid) => median(o.serverSeconds.map((s) => s.cores[Number(pid)] ?? 0)));
  const cores = coresEach.length > 0 ? median(coresEach) : 0;
  const workerPids = [...new Set(o.serverSeconds.flatMap((s) => Object.keys(s.workers ?? {})))].map(Number);
  const workers = workerPids.map((pid) => ({
    pid,
    cores: median(o.serverSeconds.map((s) => s.cores[pid] ?? 0)),
    utilization: median(o.serverSeconds.map((s) => s.workers?.[pid]).filter((u) => u !== undefined)),
  }));
  const runtime = o.runtime;
  const gcMs = runtime ? runtime.gc.minor.ms + runtime.gc.major.ms : undefined;
  // The typical count of each type over the load's first third and its last, not two single seconds: a
  // count that swings from second to second (uploads in flight, bounded) must not read as a climb.
  const actives = o.serverSeconds.map((s) => s.active).filter((a) => a !== undefined);
  const activeThird = Math.max(1, Math.floor(actives.length / 3));
  const typical = (seconds: Array<Record<string, number>>, type: string) => median(seconds.map((a) => a[type] ?? 0));
  const [firstThird, lastThird] = [actives.slice(0, activeThird), actives.slice(-activeThird)];
  const rising = [...new Set(lastThird.flatMap((a) => Object.keys(a)))]
    .map((type) => ({ type, first: typical(firstThird, type), last: typical(lastThird, type) }))
    // One of a type per connection is the load itself (05's 60 connections: 0 to 60 timers), not work left behind.
    .filter((r) => r.last >= 2 * r.first && r.last - r.first >= Math.max(THRESHOLDS.risingBy, 2 * o.connections));
  const piledUp = Object.entries(runtime?.pendingPeak ?? {})
    .filter(([, peak]) => peak >= o.connections)
    .map(([type, peak]) => ({ type, peak }));
  const seconds = o.loadSeconds.length;
  return {
    early,
    late,
    ...(costEarly !== undefined && costLate !== undefined ? { costEarly, costLate } : {}),
    p99Early: p99Of(p99s.slice(0, third)),
    p99Late: p99Of(p99s.slice(-third)),
    ...(utilizations.length > 0 ? { utilization: median(utilizations) } : {}),
    cores,
    processCores,
    workers,
    ...(runtime ? { delayP99: runtime.eventLoopDelay.p99, gcShare: gcMs! / runtime.wallMs, scavengeShare: runtime.gc.minor.share } : {}),
    ...(runtime && (o.runtimeRequests ?? o.requests) > 0 ? { gcMsPerRequest: gcMs! / (o.runtimeRequests ?? o.requests) } : {}),
    ...(o.heap ? { heapMBps: o.heap.bytesPerSecond / 1e6 } : {}),
    rising,
    piledUp,
    requestsPerSecond: seconds > 0 ? o.requests / seconds : 0,
  };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (n: number) => `${Math.round(n * 100)}%`;

export function diagnose(o: Observation): { figures: DoctorFigures; findings: Finding[] } {
  const f = figuresOf(o);
  const t = THRESHOLDS;
  const id = o.exercise.slice(0, 2);
  const findings: Finding[] = [];

  // Under a closed load, latency is connections / req/s (Little's law): req/s says it; a p99 also climbs
  // while the queue fills in the first seconds, at a constant cost (09's cluster: 1.3 s to 5.5 s).
  const slowed = f.early > 0 && f.late / f.early <= t.slowedTo;
  const costlier = f.costEarly !== undefined && f.costLate !== undefined && f.costLate >= t.costGrewBy * f.costEarly;
  if (slowed && costlier) {
    findings.push({
      kind: 'cost-grows',
      title: 'The cost of a request grows as the server runs, at a constant load',
      evidence: [
        `req/s fell from ${int(f.early)} in the first third of the load to ${int(f.late)} in the last (${(f.late / f.early).toFixed(2)}x), with the same ${o.connections} connections`,
        `each answer cost ${f.costEarly!.toFixed(2)} ms of CPU at first and ${f.costLate!.toFixed(2)} ms at the end`,
        ...(f.p99Early !== undefined && f.p99Late !== undefined ? [`p99 went from ${int(f.p99Early)} ms to ${int(f.p99Late)} ms`] : []),
      ],
      next:
        'Something accumulates with each request served, or with time. Load the server twice in a row and compare; profile it ' +
        `(npm run workshop -- profile ${id} --tool cpu) and look for work that should be constant per request but is not: ` +
        'what runs more times than there are requests, and what count keeps growing.',
    });
  }

  const heapGrows = f.heapMBps !== undefined && f.heapMBps >= t.heapMBps;
  if (heapGrows || f.rising.length > 0) {
    findings.push({
      kind: 'memory-grows',
      title: 'Memory grows, and work outlives its requests',
      evidence: [
        ...(heapGrows ? [`after a full collection at each end of the measured phase, the heap kept ${f.heapMBps!.toFixed(1)} MB/s more`] : []),
        ...f.rising.map((r) => `active ${r.type} went from ${int(r.first)} in the first third of the load to ${int(r.last)} in the last`),
      ],
      next:
        `Find what is kept and what still runs after each answer: the active resources by type in \`npm run workshop -- run ${id} --load\`, ` +
        `a heap profile (npm run workshop -- profile ${id} --tool heap, on Node 22 or later), and, after the load stops, whether work goes on.`,
    });
  }

  if (f.gcShare !== undefined && f.gcShare >= t.gcShare) {
    findings.push({
      kind: 'gc',
      title: 'The garbage collector is a large part of the cost',
      evidence: [
        `collections took ${pct(f.gcShare)} of the time (scavenges ${pct(f.scavengeShare ?? 0)})` +
          (f.gcMsPerRequest !== undefined ? `, ${f.gcMsPerRequest.toFixed(2)} ms per answer` : ''),
      ],
      next:
        `Start the server with --trace-gc (see the brief) and read what each collection frees and how long it pauses: a collection costs what is still alive when it runs. ` +
        `The cpu profile (npm run workshop -- profile ${id} --tool cpu) shows the (garbage collector) frame and the code that allocates.`,
    });
  }

  const waiting = f.cores < t.waitingCoresBelow;
  if (waiting) {
    const inFlight = f.piledUp.map((p) => `${int(p.peak)} ${p.type}`).join(', ');
    findings.push({
      kind: 'waiting',
      title: 'The server is mostly idle while requests wait',
      evidence: [
        `its processes used ${f.cores.toFixed(2)} of a core while the load kept ${o.connections} requests in flight` +
          (f.utilization !== undefined ? `; the event loop was busy ${pct(f.utilization)} of the time` : ''),
        ...(f.p99Late !== undefined ? [`p99 ${int(f.p99Late)} ms at ${int(f.requestsPerSecond)} req/s`] : []),
        ...(inFlight ? [`in flight at once: ${inFlight} (async resources by type)`] : []),
      ],
      next:
        'Requests wait on something other than this CPU: another service, a lookup, an acknowledgement, a pool. Find what each request waits for and how many wait at once ' +
        `(requests in flight = rate x time, Little's law): the async resources in \`npm run workshop -- run ${id} --load\`, NODE_DEBUG for the module that waits, a timer around each await. A CPU profile shows the idle time, not the wait.`,
    });
  }

  const busy = f.utilization !== undefined && f.utilization >= t.busy;
  const longTurns = f.delayP99 !== undefined && f.delayP99 >= t.longTurnsMs;
  if (!waiting && busy && longTurns) {
    findings.push({
      kind: 'cpu-bound',
      title: 'The CPU is busy in JavaScript, in long turns of the event loop',
      evidence: [`the event loop was busy ${pct(f.utilization!)} of the time, and its delay p99 was ${int(f.delayP99!)} ms: each turn holds up the requests behind it`],
      next: `Profile it (npm run workshop -- profile ${id} --tool cpu): the widest stacks are where the time goes. Ask whether each is work the answer needs.`,
    });
    if (o.cores >= 2 && f.cores <= t.oneCoreAtMost) {
      findings.push({
        kind: 'one-core',
        title: `One core does all the work while the other ${o.cores === 2 ? 'one idles' : `${o.cores - 1} idle`}`,
        evidence: [
          (f.processCores.length === 1
            ? `the server's process used ${f.cores.toFixed(2)} cores`
            : `the server's ${f.processCores.length} processes used ${f.cores.toFixed(2)} cores together (${f.processCores.map((c) => c.toFixed(2)).join(', ')})`) +
            ` of the ${o.cores} this machine gives it`,
          ...(f.workers.length > 0 ? [`its workers' event loops were busy ${f.workers.map((w) => pct(w.utilization)).join(', ')} of the time`] : []),
        ],
        next: `Watch the cores during the load (\`top\`, then press 1) beside \`npm run workshop -- run ${id} --load\`; if the work itself is needed, ask what would let the other cores share it.`,
      });
    }
  }
  return { figures: f, findings };
}
