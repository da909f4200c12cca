import { describe, expect, it } from 'vitest';
import { renderDoctor } from '../scripts/commands/doctor.ts';
import { doctorLine } from '../scripts/commands/run.ts';
import { doctorOfRun } from '../scripts/doctor/from-run.ts';
import type { Exercise } from '../scripts/exercises.ts';
import { doctorResult } from '../scripts/doctor/result.ts';
import { diagnose, THRESHOLDS } from '../scripts/doctor/diagnose.ts';
import type { Observation } from '../scripts/doctor/observe.ts';
import type { ServerRun, ServerSecond } from '../scripts/result.ts';
import type { RuntimeFigures } from '../scripts/probe/messages.ts';

const gc = (ms: number, wallMs: number) => ({ count: 1, ms, share: ms / wallMs });

function runtime(changes: { delayP99?: number; minorMs?: number; majorMs?: number; pendingPeak?: Record<string, number> } = {}): RuntimeFigures {
  const wallMs = 6000;
  return {
    wallMs,
    heapUsed: 20e6,
    heapTotal: 40e6,
    rss: 90e6,
    gc: { minor: gc(changes.minorMs ?? 60, wallMs), major: gc(changes.majorMs ?? 0, wallMs), other: gc(0, wallMs) },
    eventLoopDelay: { mean: 1, p50: 1, p90: 1, p99: changes.delayP99 ?? 2, max: 5 },
    activeResources: {},
    activeResourcesPeak: {},
    ...(changes.pendingPeak ? { pendingPeak: changes.pendingPeak } : {}),
  };
}

/** A healthy fast server: busy, short turns, steady req/s, one core of two, little GC, flat heap. */
function observation(changes: Partial<Observation> = {}, second: Partial<ServerSecond> = {}): Observation {
  const seconds = 6;
  return {
    exercise: '99-sample',
    label: 'mine',
    file: 'server.ts',
    node: 'v20',
    cores: 2,
    connections: 10,
    loadSeconds: Array.from({ length: seconds }, () => ({ requests: 10_000, p99: 2 })),
    serverSeconds: Array.from({ length: seconds }, () => ({ utilization: 0.99, cores: { 100: 1 }, heapUsed: 20e6, active: { TCPSocketWrap: 11 }, ...second })),
    runtime: runtime(),
    heap: { bytesPerSecond: 0, first: 20e6, last: 20e6, peak: 30e6, points: 6 },
    requests: 60_000,
    errors: 0,
    ...changes,
  };
}

const kinds = (o: Observation) => diagnose(o).findings.map((f) => f.kind);

describe('the doctor', () => {
  it('finds no problem in a fast server that keeps its speed: busy, in short turns, on one core', () => {
    expect(kinds(observation())).toEqual([]);
    expect(renderDoctor(doctorResult(observation(), 6))).toContain('No problem found.');
  });

  it('names a cost that grows: req/s falling at the same load while each answer takes more CPU', () => {
    const falling = observation({ loadSeconds: [5000, 4000, 800, 300, 200, 150].map((requests) => ({ requests, p99: 2 })) });
    expect(kinds(falling)).toContain('cost-grows');
    const evidence = diagnose(falling).findings.find((f) => f.kind === 'cost-grows')!.evidence.join(' ');
    expect(evidence).toMatch(/req\/s fell from 4,500 .* to 175/);
    expect(evidence).toContain('each answer cost 0.22 ms of CPU at first and 5.71 ms at the end');
    // The same fall with the server's CPU falling alike: the machine lent it less, the cost did not grow.
    const starved = observation({ loadSeconds: falling.loadSeconds });
    starved.serverSeconds = starved.serverSeconds.map((s, i) => ({ ...s, cores: { 100: [1, 0.9, 0.2, 0.07, 0.05, 0.04][i]! } }));
    expect(kinds(starved)).not.toContain('cost-grows');
    // A p99 that climbs while the queue fills, at a steady req/s, is not a cost that grows.
    expect(kinds(observation({ loadSeconds: [3, 3, 8, 20, 40, 60].map((p99) => ({ requests: 10_000, p99 })) }))).toEqual([]);
    // Warming up (slow first, then faster) is not either.
    expect(kinds(observation({ loadSeconds: [2000, 8000, 10_000, 10_000, 10_000, 10_000].map((requests) => ({ requests, p99: 2 })) }))).toEqual([]);
  });

  it('names memory that grows: the heap a full collection leaves, or a resource type that keeps rising', () => {
    const kept = observation({ heap: { bytesPerSecond: 30e6, first: 20e6, last: 200e6, peak: 220e6, points: 2 } });
    expect(kinds(kept)).toContain('memory-grows');
    expect(diagnose(kept).findings.find((f) => f.kind === 'memory-grows')!.evidence.join(' ')).toContain('the heap kept 30.0 MB/s more');
    expect(kinds(observation({ heap: { bytesPerSecond: 1e6, first: 20e6, last: 26e6, peak: 220e6, points: 2 } }))).not.toContain('memory-grows');
    const timers = observation();
    timers.serverSeconds = timers.serverSeconds.map((s, i) => ({ ...s, active: { TCPSocketWrap: 31, Timeout: 10 + 400 * i } }));
    const found = diagnose(timers).findings.find((f) => f.kind === 'memory-grows')!;
    expect(found.evidence.join(' ')).toContain('active Timeout went from 210 in the first third of the load to 1,810 in the last');
    // A count that swings from second to second around a level (uploads in flight, bounded) is not a climb,
    // even when its first second is low and its last high.
    const swinging = observation();
    swinging.serverSeconds = swinging.serverSeconds.map((s, i) => ({ ...s, active: { TCPSocketWrap: 31, Timeout: [112, 300, 240, 310, 250, 396][i]! } }));
    expect(kinds(swinging)).not.toContain('memory-grows');
  });

  it('names the collector when it takes a large share of the time', () => {
    expect(kinds(observation({ runtime: runtime({ minorMs: 6000 * (THRESHOLDS.gcShare + 0.05) }) }))).toContain('gc');
    expect(kinds(observation({ runtime: runtime({ minorMs: 6000 * (THRESHOLDS.gcShare - 0.05) }) }))).not.toContain('gc');
  });

  it('names waiting when the processes hardly use a core while requests are in flight, with what piled up', () => {
    const idle = observation({ runtime: runtime({ pendingPeak: { QUERYWRAP: 30, TCPWRAP: 2 } }), connections: 30 }, { utilization: 0.1, cores: { 100: 0.15 } });
    const found = diagnose(idle).findings;
    expect(found.map((f) => f.kind)).toEqual(['waiting']);
    expect(found[0]!.evidence.join(' ')).toContain('in flight at once: 30 QUERYWRAP');
  });

  it('names a busy loop in long turns, and one core doing it all when more are there', () => {
    const blocked = observation({ runtime: runtime({ delayP99: 80 }) });
    expect(kinds(blocked)).toEqual(['cpu-bound', 'one-core']);
    // The same work spread over two processes that use both cores: busy, but not on one core.
    expect(kinds(observation({ runtime: runtime({ delayP99: 80 }) }, { cores: { 100: 0.02, 101: 0.98, 102: 0.97 } }))).toEqual(['cpu-bound']);
    // On a machine of one core there is no other core to use.
    expect(kinds(observation({ cores: 1, runtime: runtime({ delayP99: 80 }) }))).toEqual(['cpu-bound']);
  });

  it('never names a fix: the findings point to tools', () => {
    const o = observation({ runtime: runtime({ delayP99: 80, minorMs: 1800 }), loadSeconds: [5000, 4000, 800, 300, 200, 150].map((requests) => ({ requests, p99: 2 })) });
    const text = renderDoctor(doctorResult(o, 6));
    expect(text).toMatch(/Next: .*profile 99 --tool cpu/);
    expect(text).not.toMatch(/cluster|semi-space|listener|batch|cache/i);
  });

  it("shows a cluster's workers each apart, so one busy worker and an idle one differ from two busy ones", () => {
    const oneBusy = observation({ runtime: runtime({ delayP99: 80 }) }, { utilization: 0.01, cores: { 100: 0.02, 101: 0.98, 102: 0.03 }, workers: { 101: 0.99, 102: 0.02 } });
    const { figures, findings } = diagnose(oneBusy);
    expect(figures.workers).toEqual([
      { pid: 101, cores: 0.98, utilization: 0.99 },
      { pid: 102, cores: 0.03, utilization: 0.02 },
    ]);
    const text = renderDoctor(doctorResult(oneBusy, 6));
    expect(text).toContain('2 workers: 101 loop busy 99%, 0.98 cores · 102 loop busy 2%, 0.03 cores');
    expect(text).toContain("the primary's event loop busy 1%");
    const bothBusy = observation({}, { utilization: 0.01, cores: { 100: 0.02, 101: 0.97, 102: 0.96 }, workers: { 101: 0.98, 102: 0.97 } });
    expect(diagnose(bothBusy).figures.workers.map((w) => w.utilization)).toEqual([0.98, 0.97]);
    expect(renderDoctor(doctorResult(bothBusy, 6))).toContain('101 loop busy 98%, 0.97 cores · 102 loop busy 97%, 0.96 cores');
    // A server of one process has no workers line.
    expect(renderDoctor(doctorResult(observation(), 6))).not.toContain('workers:');
    expect(findings).toEqual([]); // the primary's loop is idle: nothing in long turns there
  });

  it("reads a plain run --load's own seconds, and names its kinds in one line with the command for the evidence", () => {
    const o = observation({ loadSeconds: [5000, 4000, 800, 300, 200, 150].map((requests) => ({ requests, p99: 2 })) });
    const exercise = { manifest: { id: '99-sample', load: { connections: 10, warmupSeconds: 2, durationSeconds: 4 } } } as unknown as Exercise;
    const run = {
      role: 'broken', label: 'broken', title: 'as shipped', file: 'exercises/99-sample/server.ts', nodeFlags: [],
      load: { answered: 10_450, requests: 1_450, errors: 0, timeouts: 0, non2xx: 0 },
      runtime: o.runtime,
      seconds: { load: o.loadSeconds, server: o.serverSeconds },
    } as unknown as ServerRun;
    const result = doctorOfRun(exercise, run)!;
    expect(result.findings.map((f) => f.kind)).toEqual(kinds(o));
    expect(result.load.seconds).toBe(6);
    // The probe's GC time covers the measured phase: per answer of that phase.
    expect(result.figures!.gcMsPerRequest).toBeCloseTo(60 / 1_450, 5);
    const line = doctorLine(result, 'broken').replace(/\x1b\[[0-9;]*m/g, '');
    expect(line).toMatch(/^doctor: the cost of a request grows as the server runs/);
    expect(line).toContain('npm run workshop -- doctor 99 --stage broken');
    const calm = doctorOfRun(exercise, { ...run, seconds: { load: observation().loadSeconds, server: observation().serverSeconds } })!;
    expect(doctorLine(calm, 'mine').replace(/\x1b\[[0-9;]*m/g, '')).toBe('doctor: no problem found in these figures (what it looks for: npm run workshop -- doctor 99)');
    // Without its seconds (a ramp, a soak) a run has no line.
    expect(doctorOfRun(exercise, { ...run, seconds: undefined })).toBeUndefined();
    // A run's heap trend (its low points, no full collection asked for) names no growth: promoted garbage climbs too.
    const climbing = { ...run, seconds: { load: observation().loadSeconds, server: observation().serverSeconds }, heap: { bytesPerSecond: 30e6, first: 20e6, last: 200e6, peak: 220e6, points: 4 } };
    expect(doctorOfRun(exercise, climbing)!.findings.map((f) => f.kind)).not.toContain('memory-grows');
  });

  it('says why it could not observe a server', () => {
    const text = renderDoctor(doctorResult(observation({ failure: 'it failed its correctness probe' }), 6));
    expect(text).toContain('Not observed: it failed its correctness probe');
  });
});
