// The soak's windows, trends and verdict on synthetic samples, its duration parsing, its terminal section,
// and the charts (soak, ramp, steady load) as SVG. No load here: see soak-run.test.ts for a real soak.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCharts, rampCharts, soakCharts, wrap } from '../scripts/charts.ts';
import { soakSection } from '../scripts/report.ts';
import { ROOT } from '../scripts/paths.ts';
import type { RampResult, RunReport, ServerRun, SoakResult } from '../scripts/result.ts';
import { writeResults } from '../scripts/results.ts';
import { buildWindows, defaultWindowSeconds, latencyCounts, parseDuration, percentile, soakTrends, type ProbeSample } from '../scripts/soak.ts';
import { UsageError } from '../scripts/usage-error.ts';
import { loadResult, sampleManifest } from './sample.ts';

interface Synthetic {
  seconds: number;
  /** req/s in second i. */
  rate?: (second: number) => number;
  /** Response times of second i (ms). */
  latency?: (second: number) => number[];
  /** Heap at sample i (taken at the end of second i). */
  heap: (second: number) => number;
  /** GC ms spent in second i. */
  gcMs?: (second: number) => number;
  /** Whether a major GC ran just before sample i (default: every 7 s, with the sawtooth's drop). */
  major?: (second: number) => boolean;
}

/** A soak's raw material as runSoak collects it: counts and response times per second, probe samples. */
function synthetic(s: Synthetic) {
  const perSecond = Array.from({ length: s.seconds }, (_, i) => s.rate?.(i) ?? 200);
  const latencies = Array.from({ length: s.seconds }, (_, i) => latencyCounts(s.latency?.(i) ?? [20, 22, 25, 30]));
  let gc = 0;
  let majors = 0;
  const samples: ProbeSample[] = Array.from({ length: s.seconds }, (_, i) => {
    gc += s.gcMs?.(i) ?? 30;
    if (s.major ? s.major(i) : i > 0 && i % 7 === 0) majors += 1;
    // The probe's clock drifts a little from autocannon's ticks: samples land a few ms after each second.
    return { wallMs: (i + 1) * 1000 - 5, heapUsed: s.heap(i), gc: { minor: { ms: gc * 0.9 }, major: { ms: gc * 0.1, count: majors } } };
  });
  return { perSecond, latencies, samples };
}

function soakOf(s: Synthetic, windowSeconds = 10): SoakResult {
  const { perSecond, latencies, samples } = synthetic(s);
  const windows = buildWindows(perSecond, latencies, samples, windowSeconds);
  return { seconds: s.seconds, windowSeconds, windows, ...soakTrends(windows) };
}

const MB = 1e6;
/** The V8 sawtooth: garbage piles up for `period` seconds, then a collection drops it. */
const sawtooth = (i: number, period = 7, tooth = 40 * MB) => ((i % period) / (period - 1)) * tooth;

describe('soak windows', () => {
  it('cuts the per-second counts, response times and probe samples into windows', () => {
    const { perSecond, latencies, samples } = synthetic({
      seconds: 30,
      rate: (i) => (i < 10 ? 100 : 300),
      latency: (i) => (i < 10 ? [10, 10, 10, 90] : [5]),
      heap: (i) => 50 * MB + i * MB,
      gcMs: (i) => (i < 20 ? 50 : 200),
    });
    const windows = buildWindows(perSecond, latencies, samples, 10);
    expect(windows).toHaveLength(3);
    expect(windows.map((w) => w.startSecond)).toEqual([0, 10, 20]);
    expect(windows[0]!.requestsPerSecond).toBe(100);
    expect(windows[1]!.requestsPerSecond).toBe(300);
    expect(windows[0]!.latencyP99).toBe(90);
    expect(windows[1]!.latencyP99).toBe(5);
    // The lowest sample of each window: the first second's.
    expect(windows[0]!.heapUsed).toBe(50 * MB);
    expect(windows[2]!.heapUsed).toBe(70 * MB);
    // GC is cumulative in the samples; each window's share is its own difference over its wall time.
    expect(windows[0]!.gcShare).toBeCloseTo(0.05, 2);
    expect(windows[1]!.gcShare).toBeCloseTo(0.05, 2);
    expect(windows[2]!.gcShare).toBeCloseTo(0.2, 2);
    // Major GCs at seconds 7, 14, 21 and 28.
    expect(windows.map((w) => w.majorGcs)).toEqual([1, 1, 2]);
  });

  it('ignores a sample taken before the probe was reset, and leaves out a short last window', () => {
    const { perSecond, latencies, samples } = synthetic({ seconds: 23, heap: () => 50 * MB });
    // Sent before the reset arrived: it covers the warm-up, its GC time is not the soak's.
    const early: ProbeSample = { wallMs: 4000, heapUsed: 10 * MB, gc: { minor: { ms: 900 }, major: { ms: 0, count: 3 } } };
    const windows = buildWindows(perSecond, latencies, [early, ...samples], 10);
    expect(windows).toHaveLength(2); // 3 s left over is under half a window
    expect(windows[0]!.heapUsed).toBe(50 * MB);
    expect(windows[0]!.gcShare).toBeCloseTo(0.03, 2);
    // 6 s left over is kept, as a shorter window.
    const longer = synthetic({ seconds: 26, heap: () => 50 * MB });
    const kept = buildWindows(longer.perSecond, longer.latencies, longer.samples, 10);
    expect(kept.map((w) => w.seconds)).toEqual([10, 10, 6]);
  });

  it('marks a window without a probe sample as unknown instead of inventing figures', () => {
    const { perSecond, latencies, samples } = synthetic({ seconds: 30, heap: () => 50 * MB });
    const windows = buildWindows(perSecond, latencies, samples.filter((s) => s.wallMs < 10_000 || s.wallMs >= 20_000), 10);
    expect(windows[1]!.heapUsed).toBeNull();
    expect(windows[1]!.gcShare).toBeNull();
    expect(windows[1]!.majorGcs).toBeNull();
    expect(windows[2]!.gcShare).toBeCloseTo(0.03, 2); // measured from the last sample before it
  });

  it('takes the nearest-rank percentile of response times counted by whole millisecond', () => {
    expect(percentile([], 0.99)).toBe(0);
    expect(percentile([undefined, latencyCounts([5.7])], 0.99)).toBe(5);
    expect(percentile([latencyCounts(Array.from({ length: 100 }, (_, i) => i + 1.2))], 0.99)).toBe(99);
    // Seconds merge: the percentile is the window's, not an average of its seconds'.
    expect(percentile([latencyCounts([3, 1]), latencyCounts([2, 1000])], 0.5)).toBe(2);
    expect(latencyCounts([0.2, 0.9, 1.5])).toEqual(new Map([[0, 2], [1, 1]]));
  });

  it('chooses 10 s windows, shorter for a short soak', () => {
    expect(defaultWindowSeconds(180)).toBe(10);
    expect(defaultWindowSeconds(3600)).toBe(10);
    expect(defaultWindowSeconds(20)).toBe(3);
    expect(defaultWindowSeconds(10)).toBe(1);
  });
});

describe('soak trends and verdict', () => {
  it('calls a leak under the GC sawtooth degrading, and says by how much', () => {
    const soak = soakOf({ seconds: 180, heap: (i) => 60 * MB + i * 0.4 * MB + sawtooth(i) });
    expect(soak.windows).toHaveLength(18);
    expect(soak.trends.heapUsed.degrading).toBe(true);
    expect(soak.trends.heapUsed.slopePerMinute / MB).toBeGreaterThan(20);
    expect(soak.trends.heapUsed.slopePerMinute / MB).toBeLessThan(28);
    expect(soak.trends.heapUsed.change).toBeGreaterThan(2);
    expect(soak.verdict).toBe('degrading');
    expect(soak.trends.heapUsed.basis).toBe('after-major');
    expect(soak.reasons[0]).toMatch(/^heap \+2\d\.\d MB a minute after major GCs, \d\.\d\dx its first window/);
    expect(soak.trends.requestsPerSecond.degrading).toBe(false);
  });

  it('calls a flat heap with a GC sawtooth steady, whatever the phase of its teeth', () => {
    for (const period of [3, 7, 13, 30]) {
      const soak = soakOf({
        seconds: 180,
        heap: (i) => 60 * MB + sawtooth(i, period, 80 * MB),
        major: (i) => i > 0 && i % period === 0,
        rate: (i) => 200 + (i % 5) * 8,
      });
      expect(soak.verdict, `period ${period} s`).toBe('steady');
      expect(soak.reasons).toEqual([]);
      expect(Math.abs(soak.trends.heapUsed.slopePerMinute)).toBeLessThan(5 * MB);
    }
  });

  it('does not call a climbing heap a leak until major GCs confirm it: it says so instead', () => {
    // Promoted garbage piles up between major GCs in a healthy server too.
    const none = soakOf({ seconds: 60, heap: (i) => 16 * MB + i * 0.23 * MB, major: () => false });
    expect(none.trends.heapUsed.basis).toBe('all');
    expect(none.trends.heapUsed.degrading).toBe(false);
    expect(none.verdict).toBe('steady');
    expect(none.notes![0]).toMatch(/^heap \+1\d\.\d MB a minute, .* but no major GC ran in the soak: .* a longer soak will tell$/);
    const two = soakOf({ seconds: 180, heap: (i) => 16 * MB + (i % 90) * 0.3 * MB, major: (i) => i % 90 === 0 && i > 0 });
    expect(two.trends.heapUsed.degrading).toBe(false);
    expect(two.notes?.[0] ?? '').not.toMatch(/no major GC/);
    // A leak the major GCs do not stop is called one.
    const leak = soakOf({ seconds: 180, heap: (i) => 16 * MB + i * 0.3 * MB + (i % 5) * 4 * MB, major: (i) => i % 5 === 0 && i > 0 });
    expect(leak.trends.heapUsed.degrading).toBe(true);
    expect(leak.notes).toBeUndefined();
  });

  it('catches a falling pace, a rising p99 and a growing GC share, each on its own', () => {
    const slower = soakOf({ seconds: 120, heap: () => 60 * MB, rate: (i) => 400 - i * 2 });
    expect(slower.trends.requestsPerSecond.degrading).toBe(true);
    expect(slower.reasons.join()).toMatch(/req\/s -\d+ a minute, 0\.\d+x its first window/);
    const later = soakOf({ seconds: 120, heap: () => 60 * MB, latency: (i) => [20, 20 + i * 2] });
    expect(later.trends.latencyP99.degrading).toBe(true);
    expect(later.reasons.join()).toMatch(/p99 \+\d+\.\d ms a minute/);
    const collecting = soakOf({ seconds: 120, heap: () => 60 * MB, gcMs: (i) => 20 + i * 3 });
    expect(collecting.trends.gcShare.degrading).toBe(true);
    expect(collecting.reasons.join()).toMatch(/GC share \+\d+\.\d points a minute/);
    for (const soak of [slower, later, collecting]) expect(soak.verdict).toBe('degrading');
  });

  it('does not call noise a trend: a p99 of 1-3 ms, one slow window, a wobbling pace', () => {
    const soak = soakOf({
      seconds: 180,
      heap: () => 60 * MB,
      rate: (i) => (i >= 100 && i < 110 ? 120 : 200 + ((i * 37) % 23)),
      latency: (i) => [1, 1, 2, i > 150 ? 3 : 1],
    });
    expect(soak.verdict).toBe('steady');
  });

  it('needs a few windows to call a trend', () => {
    const soak = soakOf({ seconds: 20, heap: (i) => 60 * MB + i * 10 * MB });
    expect(soak.windows).toHaveLength(2);
    expect(soak.verdict).toBe('steady');
  });
});

describe('duration of a soak', () => {
  it('is a usage error on the command line, as is --soak with --port', () => {
    const workshop = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/workshop.ts', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 });
    for (const [args, message] of [
      [['run', '01', '--soak', '5s'], '--soak must be between 10 s and 60 min, got "5s"'],
      [['run', '01', '--soak', 'soon'], '--soak takes a duration like 90s, 3m, 1m30s or 180'],
      [['run', '01', '--soak', '3m', '--port', '3001'], '--port is for a server you call yourself; --load and --soak pick a free port'],
    ] as const) {
      const result = workshop(...args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('reads 90s, 3m, 1m30s and plain seconds', () => {
    expect(parseDuration('90s')).toBe(90);
    expect(parseDuration('3m')).toBe(180);
    expect(parseDuration('1m30s')).toBe(90);
    expect(parseDuration('180')).toBe(180);
    expect(parseDuration(' 2M ')).toBe(120);
    expect(parseDuration('10s')).toBe(10);
    expect(parseDuration('60m')).toBe(3600);
  });

  it('rejects what it cannot read and what is out of bounds, with a clear message', () => {
    for (const bad of ['', 'abc', '1.5m', '-3m', '3h', '3 m', 'm', '1m30']) {
      expect(() => parseDuration(bad), bad).toThrow(UsageError);
      expect(() => parseDuration(bad), bad).toThrow(/like 90s, 3m, 1m30s or 180/);
    }
    expect(() => parseDuration('5s')).toThrow(/between 10 s and 60 min, got "5s" \(5 s\)/);
    expect(() => parseDuration('61m')).toThrow(/between 10 s and 60 min/);
    expect(() => parseDuration('0')).toThrow(/between 10 s and 60 min/);
    // The ramp's --over reads durations the same way, with its own bounds.
    expect(parseDuration('40s', 'over', 4, 600)).toBe(40);
    expect(() => parseDuration('2s', 'over', 4, 600)).toThrow(/^--over must be between 4 s and 10 min/);
  });
});

const leakingSoak = () => soakOf({ seconds: 180, heap: (i) => 60 * MB + i * 0.4 * MB + sawtooth(i), rate: (i) => 300 - i });

function soakRun(soak: SoakResult): ServerRun {
  return { role: 'broken', label: 'broken', title: 'as shipped', file: 'x.ts', nodeFlags: [], load: loadResult(200), soak };
}

describe('the soak in the terminal', () => {
  it('shows the first and last windows, a sparkline, slope and change per trend, and the verdict with its reasons', () => {
    const text = soakSection(soakRun(leakingSoak()));
    expect(text).toContain('soak · broken · 180 s in 18 windows of 10 s');
    expect(text).toContain('0-10 s');
    expect(text).toContain('… 8 more');
    expect(text).toContain('170-180 s');
    expect(text).toMatch(/heap MB\s+[▁▂▃▄▅▆▇█]{18}\s+\d+ → \d+\s+\+2\d\.\d MB\s+\d\.\d\dx\s+degrading/);
    expect(text).toMatch(/soak verdict DEGRADING: heap \+2\d\.\d MB a minute after major GCs/);
    const crashed = soakSection(soakRun({ ...leakingSoak(), endedAfter: 94 }));
    expect(crashed).toContain('the server exited after 94 s');
  });
});

const ramp: RampResult = {
  from: 20,
  to: 240,
  stepSeconds: 5,
  steps: Array.from({ length: 12 }, (_, i) => {
    const offered = 20 + i * 20;
    return {
      offered,
      achieved: Math.min(offered, 140),
      latency: { p50: 10, p90: 20, p99: offered > 140 ? 40 * (offered - 130) : i === 0 ? 0 : 30, max: 0, mean: 0 },
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      seconds: 5,
    };
  }),
  lowLoadP99: 30,
  knee: { offered: 140, achieved: 139, step: 6, reason: 'answered 148 of 160 req/s' },
  cliff: 120,
};

describe('charts', () => {
  it('draws a soak: req/s and p99, heap with its trend, GC share; and where the server exited', async () => {
    const charts = await soakCharts({ ...leakingSoak(), endedAfter: 175 }, 'broken');
    expect(charts.map((c) => c.name)).toEqual(['soak-throughput', 'soak-heap', 'soak-gc']);
    const [throughput, heap, gc] = charts.map((c) => c.svg);
    for (const svg of [throughput, heap, gc]) {
      expect(svg).toMatch(/^<svg /);
      expect(svg).toContain('time into the soak (s)');
      expect(svg).toContain('server exited');
    }
    expect(throughput).toContain('req/s (window mean)');
    expect(throughput).toContain('p99 latency (ms)');
    expect(heap).toContain('heap used (MB)');
    expect(heap).toContain('broken · Heap over the soak');
    expect(gc).toContain('time in GC (% of wall time)');
    // The spec is kept for the hub to render live: plain JSON, the data inline.
    expect(JSON.parse(JSON.stringify(charts[1]!.spec)).data.values).toHaveLength(18);
  });

  it('draws a ramp: answered against offered with the keeping-up line, p99 on a log scale, the knee marked', async () => {
    const [throughput, latency] = await rampCharts(ramp, 'stage 1');
    expect(throughput!.svg).toContain('offered load (req/s)');
    expect(throughput!.svg).toContain('answered (2xx req/s)');
    expect(throughput!.svg).toContain('keeping up (answered = offered)');
    expect(throughput!.svg).toContain('knee: 140 req/s offered');
    expect(latency!.svg).toContain('p99 latency (ms, log scale)');
    expect(latency!.svg).toContain('knee: 140 req/s offered');
    const noKnee = await rampCharts({ ...ramp, knee: undefined, cliff: undefined });
    expect(noKnee[0]!.svg).toContain('no knee: the server kept up with every step');
  });

  it('draws a steady run second by second, and nothing without seconds', async () => {
    const run = soakRun(leakingSoak());
    const [chart] = await loadCharts({ ...run, soak: undefined, load: loadResult(200, { perSecond: [190, 210, 205, 180] }) });
    expect(chart!.svg).toContain('second of the measured phase');
    expect(chart!.svg).toContain('requests answered (req/s)');
    expect(await loadCharts({ ...run, load: undefined })).toEqual([]);
  });

  it('wraps a long subtitle into lines', () => {
    const lines = wrap('a '.repeat(100).trim(), 20);
    expect(lines.every((l) => l.length <= 20)).toBe(true);
    expect(lines.join(' ')).toBe('a '.repeat(100).trim());
    expect(wrap('each point is a 10 s window', 17)).toEqual(['each point is a', '10 s window']);
  });
});

describe('results on disk', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'hotpath-results-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes the JSON and each server charts into a folder named by time, exercise and kind', async () => {
    const manifest = sampleManifest();
    const report: RunReport = {
      exercise: { id: manifest.id, title: manifest.title },
      node: process.version,
      startedAt: '2026-05-12T10:30:05.123Z',
      load: manifest.load,
      servers: [soakRun(leakingSoak()), { ...soakRun(leakingSoak()), label: 'stage 1', soak: undefined }],
      verdicts: [],
      pass: true,
    };
    const written = await writeResults(report, 'soak', root);
    expect(path.basename(written.dir)).toBe('2026-05-12T10-30-05Z-99-sample-soak');
    expect(JSON.parse(readFileSync(written.json, 'utf8')).servers[0].soak.windows).toHaveLength(18);
    expect(readdirSync(written.dir).sort()).toEqual([
      'broken-soak-gc.svg',
      'broken-soak-heap.svg',
      'broken-soak-throughput.svg',
      'result.json',
      'stage-1-load-per-second.svg',
    ]);
    expect(written.svgs).toHaveLength(4);
  });
});
