// What the doctor reads: one server under the exercise's own load (its warm-up and measured phase back to
// back, as profile runs them), second by second from its first request: the load's answers and p99, the
// event loop's utilization (and each cluster worker's), the CPU each of the server's processes used, the
// heap and the active resources (seconds.ts); and over the whole load, the probe's GC time by kind,
// event-loop delay and async resources in flight.
import os from 'node:os';
import type { ServerSpec } from '../bench-options.ts';
import type { Exercise } from '../exercises.ts';
import { runPhase, type LoadProgress } from '../load.ts';
import type { LoadSecond, ServerSecond } from '../result.ts';
import { Seconds } from './seconds.ts';
import type { RuntimeFigures } from '../probe/messages.ts';
import { startServices } from '../services/index.ts';
import { startAndProbe } from '../start-and-probe.ts';
import { waitUntilQuiet } from '../idle.ts';
import { keptHeapTrend, type HeapTrend } from '../trend.ts';
import type { Frame } from '../profile/cpu-tree.ts';
import { mappedFiles, profileOfExited } from '../profile/cpu-run.ts';

export interface Observation {
  exercise: string;
  label: string;
  file: string;
  node: string;
  /** Cores this server may use (os.availableParallelism). */
  cores: number;
  connections: number;
  loadSeconds: LoadSecond[];
  serverSeconds: ServerSecond[];
  /** The probe's figures over the whole load. */
  runtime?: RuntimeFigures;
  /** The heap a full collection left at the start and the end of the measured phase (trend.ts keptHeapTrend). */
  heap?: HeapTrend;
  /** 2xx answers over the whole load. */
  requests: number;
  /** Answers over the time the runtime figures cover, when not the whole load. */
  runtimeRequests?: number;
  errors: number;
  /** Set when the server could not be observed: it did not start, failed its probe, or crashed. */
  failure?: string;
}

export interface ObserveOptions {
  onProgress?(progress: LoadProgress): void;
  /**
   * Also profile the server with --cpu-prof into this folder (the checks of the doctor, the profile advice
   * and the diff share one run per server): the observation then carries the profile's tree. A trainee's
   * `doctor` runs without it.
   */
  cpuProfileDir?: string;
}

export async function observe(exercise: Exercise, spec: ServerSpec, options: ObserveOptions = {}): Promise<Observation & { profile?: Frame }> {
  const onProgress = options.onProgress ?? (() => {});
  const profiling = options.cpuProfileDir !== undefined;
  const { manifest } = exercise;
  const load = manifest.load;
  const base = {
    exercise: manifest.id,
    label: spec.run.label,
    file: spec.run.file,
    node: process.version,
    cores: os.availableParallelism(),
    connections: load.connections,
    loadSeconds: [] as LoadSecond[],
    serverSeconds: [] as ServerSecond[],
    requests: 0,
    errors: 0,
  };
  const services = await startServices(manifest.services ?? []);
  try {
    const extraNodeFlags = profiling ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
    const started = await startAndProbe(exercise, spec, services, { extraNodeFlags });
    if (!started.server) return { ...base, failure: started.run.failure ?? 'it failed its correctness probe' };
    const { server } = started;
    try {
      server.resetFigures();
      const sampledFrom = server.samples.length;
      // The exercise's load as profile runs it: the warm-up and the measured phase back to back (verify's
      // wait between them for the warm-up's slow requests, 03's, would be seconds of an idle server).
      const phases = [
        { phase: 'warm-up' as const, length: load.warmupSeconds },
        { phase: 'measured' as const, length: load.durationSeconds },
      ].filter((p) => p.length > 0);
      const totals = { answered: 0, errors: 0 };
      // The heap over the measured phase (while a server warms up its heap grows anyway): what a full
      // collection leaves at its start and at its end. Between full collections, garbage promoted to the old
      // generation climbs like a leak (05's fixed server on Node 22: 10 MB/s over 6 s, gone at the next one).
      let measuredFrom = sampledFrom;
      // One sample a second while the load runs (not while the server settles between the phases).
      const seconds = new Seconds(server, { 'warm-up': load.warmupSeconds, measured: load.durationSeconds });
      let kept: { at: number; heap: number } | undefined;
      for (const { phase, length } of phases) {
        if (phase === 'measured') {
          measuredFrom = server.samples.length;
          kept = await fullCollection(server);
        }
        await seconds.start();
        try {
          const result = await runPhase(server.url, load, phase, length, (progress) => {
            seconds.onLoad(progress);
            onProgress(progress);
          });
          totals.answered += result['2xx'];
          totals.errors += result.errors + result.timeouts + result.non2xx;
        } finally {
          await seconds.stop();
        }
      }
      const loadEnded = performance.now();
      const runtime = await server.snapshot();
      // What the heap kept, not what the last requests still hold (05's log lines waiting to be written):
      // the end's full collection once the server's processes are quiet (1 s at most: a backlog that lasts
      // longer, 02's uploads, is what the figure is for), over the load's own seconds.
      let keptAtEnd: { at: number; heap: number } | undefined;
      if (kept && !server.exit()) {
        await waitUntilQuiet(server, 1000);
        const end = await fullCollection(server);
        keptAtEnd = end && { at: loadEnded, heap: end.heap };
      }
      const heap = kept && keptAtEnd ? keptHeapTrend(kept, keptAtEnd, server.samples.slice(measuredFrom)) : undefined;
      const exit = server.exit();
      let profile: Frame | undefined;
      if (profiling && !exit) {
        const maps = await server.sourceMaps(mappedFiles(exercise, spec));
        await server.exitNormally();
        profile = (await profileOfExited(server, options.cpuProfileDir!, maps)).tree;
      }
      return {
        ...base,
        loadSeconds: seconds.load,
        serverSeconds: seconds.server,
        ...(runtime ? { runtime } : {}),
        ...(heap ? { heap } : {}),
        requests: totals.answered,
        errors: totals.errors,
        ...(exit ? { failure: `the server exited during the load (${exit.signal ?? `exit code ${exit.code}`})` } : {}),
        ...(profile ? { profile } : {}),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await services.stop();
  }
}

/** A full collection in the server now (the probe's), and when: undefined if the probe did not answer. */
async function fullCollection(server: { collect(): Promise<number | undefined> }): Promise<{ at: number; heap: number } | undefined> {
  const heap = await server.collect();
  return heap === undefined ? undefined : { at: performance.now(), heap };
}
