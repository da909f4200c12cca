// A soak: the exercise's steady load for minutes, cut into windows, so what only shows over time (a heap
// that climbs, a pace that falls, a p99 that creeps up, GC that takes a growing share) shows as a trend.
import type { AnswerSampler } from './answers.ts';
import type autocannon from 'autocannon';
import { megabytes, integer, sparkline } from './format.ts';
import { runPhase, type LoadProgress } from './load.ts';
import type { LoadProfile } from './manifest.ts';
import type { RuntimeFigures } from './probe/messages.ts';
import type { LoadResult, SoakResult, SoakTrend, SoakWindow } from './result.ts';
import { slope } from './trend.ts';
import { UsageError } from './usage-error.ts';

export interface SoakOptions {
  seconds: number;
  /** Length of each window the trends are computed over (default 10 s, shorter for a short soak). */
  windowSeconds?: number;
  /** Whether the server has exited (set by the bench): the soak stops then instead of loading a dead port. */
  serverExited?: () => boolean;
}

export const SOAK_MIN_SECONDS = 10;
export const SOAK_MAX_SECONDS = 60 * 60;

/** "90s", "3m", "1m30s" or "180" (seconds), within bounds: 10 s to 60 min for --soak. Also read by --ramp's --over. */
export function parseDuration(text: string, flag = 'soak', minSeconds = SOAK_MIN_SECONDS, maxSeconds = SOAK_MAX_SECONDS): number {
  const trimmed = text.trim().toLowerCase();
  const match = /^(\d+)$/.exec(trimmed) ?? /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(trimmed);
  if (!trimmed || !match) throw new UsageError(`--${flag} takes a duration like 90s, 3m, 1m30s or 180 (seconds), got "${text}"`);
  const seconds = match.length === 2 ? Number(match[1]) : Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
  if (seconds < minSeconds || seconds > maxSeconds) {
    throw new UsageError(`--${flag} must be between ${spoken(minSeconds)} and ${spoken(maxSeconds)}, got "${text}" (${seconds} s)`);
  }
  return seconds;
}

/** 600 → "10 min", 90 → "90 s". */
function spoken(seconds: number): string {
  return seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** 10 s windows, shorter for a short soak so it still has about six of them. */
export function defaultWindowSeconds(seconds: number): number {
  return Math.max(1, Math.min(10, Math.floor(seconds / 6)));
}

/**
 * What makes a trend "degrading". Each needs both the fitted slope and the change from the first window
 * to the last beyond its threshold, so one odd window does not decide it. Set from 3-minute soaks measured
 * here: the fixed servers' heaps moved -1.3 to +4.0 MB a minute (02 stages 2 and 3, 01 stage 2: its young
 * generation alone swings the heap's low by several MB), the leaks' +60 (01 broken) to +440 (02 broken);
 * a fixed server's req/s wandered by up to 20% between windows, 06 broken's fell to 0.1x in a minute.
 */
export const SOAK_THRESHOLDS = {
  /** Heap's lower envelope: MB a minute, and last window over first. */
  heapMBPerMinute: 10,
  heapChange: 1.25,
  /** req/s: the fitted line falls by this share of its mean over the soak, and last over first below this. */
  requestsFall: 0.15,
  requestsChange: 0.85,
  /** p99: the fitted line rises by this share of the first window's p99 over the soak, last over first above, and by 5 ms at least. */
  latencyRise: 0.5,
  latencyChange: 1.5,
  latencyMinMs: 5,
  /** GC share: the fitted line rises by this many points of wall time over the soak, and last minus first too. */
  gcRisePoints: 0.05,
};

/** The probe sample's fields a window needs. */
export type ProbeSample = Pick<RuntimeFigures, 'wallMs' | 'heapUsed'> & { gc: { minor: { ms: number }; major: { ms: number; count: number } } };

/**
 * Cuts a soak into windows of `windowSeconds`: req/s from the per-second counts, p99 from the response
 * times recorded in each second of the window, the heap's lowest sample, the GC share and the major GCs
 * from the probe's samples (cumulative since the reset at the soak's start, so a window's GC time is a
 * difference). A last window shorter than half the others is left out: too few samples to compare.
 */
export function buildWindows(perSecond: number[], latencies: ReadonlyArray<LatencyCounts | undefined>, samples: ProbeSample[], windowSeconds: number): SoakWindow[] {
  const windows: SoakWindow[] = [];
  const clean = fromReset(samples);
  for (let start = 0; start < perSecond.length; start += windowSeconds) {
    const seconds = Math.min(windowSeconds, perSecond.length - start);
    if (seconds < windowSeconds / 2) break;
    const answered = perSecond.slice(start, start + seconds).reduce((sum, n) => sum + n, 0);
    const fromMs = start * 1000;
    const toMs = (start + seconds) * 1000;
    const inside = clean.filter((s) => s.wallMs >= fromMs && s.wallMs < toMs);
    const before = clean.filter((s) => s.wallMs < fromMs).at(-1);
    const last = inside.at(-1);
    const gcMs = (s: ProbeSample | undefined) => (s ? s.gc.minor.ms + s.gc.major.ms : 0);
    const spanMs = last ? last.wallMs - (before?.wallMs ?? 0) : 0;
    windows.push({
      startSecond: start,
      seconds,
      requestsPerSecond: answered / seconds,
      latencyP99: percentile(latencies.slice(start, start + seconds), 0.99),
      heapUsed: inside.length > 0 ? Math.min(...inside.map((s) => s.heapUsed)) : null,
      gcShare: last && spanMs > 0 ? Math.max(0, (gcMs(last) - gcMs(before)) / spanMs) : null,
      majorGcs: last ? last.gc.major.count - (before?.gc.major.count ?? 0) : null,
    });
  }
  return windows;
}

/** The samples from the probe's reset on: one taken before the reset arrived covers more wall time than the next. */
function fromReset<T extends { wallMs: number }>(samples: T[]): T[] {
  let first = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i]!.wallMs < samples[i - 1]!.wallMs) first = i;
  return samples.slice(first);
}

/**
 * Response times counted by whole millisecond (floored, as autocannon's histogram records them): a
 * soak of minutes at thousands of req/s would otherwise keep millions of numbers in the load's process.
 */
export type LatencyCounts = Map<number, number>;

export function countLatency(counts: LatencyCounts, ms: number): void {
  const key = Math.floor(ms);
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Counts of the given response times (for tests and callers that hold plain numbers). */
export function latencyCounts(values: number[]): LatencyCounts {
  const counts: LatencyCounts = new Map();
  for (const value of values) countLatency(counts, value);
  return counts;
}

/** The nearest-rank percentile of the counted response times; 0 when there are none. */
export function percentile(counts: ReadonlyArray<LatencyCounts | undefined>, fraction: number): number {
  const merged = new Map<number, number>();
  for (const second of counts) for (const [ms, n] of second ?? []) merged.set(ms, (merged.get(ms) ?? 0) + n);
  const total = [...merged.values()].reduce((sum, n) => sum + n, 0);
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(fraction * total));
  let seen = 0;
  for (const ms of [...merged.keys()].sort((a, b) => a - b)) {
    seen += merged.get(ms)!;
    if (seen >= rank) return ms;
  }
  return 0;
}

type Figure = 'requestsPerSecond' | 'latencyP99' | 'heapUsed' | 'gcShare';

function trendOf(windows: SoakWindow[], figure: Figure): { trend: SoakTrend; first: number; last: number; minutes: number; mean: number } {
  const points = windows
    .filter((w) => w[figure] !== null)
    .map((w) => [(w.startSecond + w.seconds / 2) / 60, w[figure] as number] as [number, number]);
  const first = points[0]?.[1] ?? 0;
  const last = points.at(-1)?.[1] ?? 0;
  const minutes = points.length > 1 ? points.at(-1)![0] - points[0]![0] : 0;
  const mean = points.reduce((sum, [, y]) => sum + y, 0) / Math.max(1, points.length);
  const slopePerMinute = points.length >= 3 ? slope(points) : 0;
  const change = first > 0 ? last / first : last > 0 ? Infinity : 1;
  return { trend: { slopePerMinute, change, degrading: false }, first, last, minutes, mean };
}

/**
 * The windows the heap's trend is fitted on. Only a major GC frees old garbage: between two, the heap's
 * lowest point climbs in a healthy server too, as garbage is promoted (01's fixed server: +14 MB a minute
 * over a minute without one). So the trend is fitted on the windows that had a major GC, the heap after a
 * full collection, when at least three did over a third of the soak or more; otherwise on all windows, and
 * a climb is then only noted, not called a leak.
 */
export function heapBasis(windows: SoakWindow[]): { fittedOn: number[]; basis: 'after-major' | 'all' } {
  const measured = windows.flatMap((w, i) => (w.heapUsed !== null ? [i] : []));
  const afterMajor = measured.filter((i) => (windows[i]!.majorGcs ?? 0) > 0);
  const span = (list: number[]) => (list.length > 1 ? windows[list.at(-1)!]!.startSecond - windows[list[0]!]!.startSecond : 0);
  if (afterMajor.length >= 3 && span(afterMajor) >= span(measured) / 3) return { fittedOn: afterMajor, basis: 'after-major' };
  return { fittedOn: measured, basis: 'all' };
}

/** The four trends, the verdict and its reasons in words. */
export function soakTrends(windows: SoakWindow[], thresholds = SOAK_THRESHOLDS): Pick<SoakResult, 'trends' | 'verdict' | 'reasons' | 'notes'> {
  const t = thresholds;
  const reasons: string[] = [];
  const notes: string[] = [];
  // The heap's basis is recorded with its trend, so what renders it shows the windows it was fitted on.
  const basis = heapBasis(windows);
  const heap = trendOf(basis.fittedOn.map((i) => windows[i]!), 'heapUsed');
  heap.trend.basis = basis.basis;
  heap.trend.fittedOn = basis.fittedOn;
  const requests = trendOf(windows, 'requestsPerSecond');
  const latency = trendOf(windows, 'latencyP99');
  const gc = trendOf(windows, 'gcShare');
  const enough = windows.length >= 3;
  const times = (change: number) => (Number.isFinite(change) ? `${change >= 10 ? change.toFixed(0) : change.toFixed(2)}x its first window` : 'from nothing');

  const heapClimbs = enough && heap.trend.slopePerMinute > t.heapMBPerMinute * 1e6 && heap.trend.change > t.heapChange;
  const heapText = (after: string) =>
    `heap +${(heap.trend.slopePerMinute / 1e6).toFixed(1)} MB a minute${after}, ${times(heap.trend.change)} (${megabytes(heap.first)} → ${megabytes(heap.last)})`;
  heap.trend.degrading = heapClimbs && basis.basis === 'after-major';
  if (heap.trend.degrading) reasons.push(heapText(' after major GCs'));
  else if (heapClimbs) {
    const majors = windows.reduce((sum, w) => sum + (w.majorGcs ?? 0), 0);
    notes.push(
      `${heapText('')}, but ${majors === 0 ? 'no major GC ran' : `only ${majors} major GC${majors === 1 ? '' : 's'} ran`} in the soak: ` +
        'old garbage stays until one does, so this may be garbage rather than a leak; a longer soak will tell',
    );
  }
  const fitFall = -requests.trend.slopePerMinute * requests.minutes;
  requests.trend.degrading = enough && requests.mean > 0 && fitFall > t.requestsFall * requests.mean && requests.trend.change < t.requestsChange;
  if (requests.trend.degrading) {
    reasons.push(`req/s ${integer(requests.trend.slopePerMinute)} a minute, ${times(requests.trend.change)} (${integer(requests.first)} → ${integer(requests.last)})`);
  }
  const fitRise = latency.trend.slopePerMinute * latency.minutes;
  latency.trend.degrading =
    enough && fitRise > t.latencyRise * latency.first && fitRise >= t.latencyMinMs && latency.trend.change > t.latencyChange && latency.last - latency.first >= t.latencyMinMs;
  if (latency.trend.degrading) {
    reasons.push(`p99 +${latency.trend.slopePerMinute.toFixed(1)} ms a minute, ${times(latency.trend.change)} (${integer(latency.first)} → ${integer(latency.last)} ms)`);
  }
  const gcRise = gc.trend.slopePerMinute * gc.minutes;
  gc.trend.degrading = enough && gcRise > t.gcRisePoints && gc.last - gc.first > t.gcRisePoints;
  if (gc.trend.degrading) {
    reasons.push(`GC share +${(gc.trend.slopePerMinute * 100).toFixed(1)} points a minute (${(gc.first * 100).toFixed(1)}% → ${(gc.last * 100).toFixed(1)}% of the time)`);
  }
  return {
    trends: { requestsPerSecond: requests.trend, latencyP99: latency.trend, heapUsed: heap.trend, gcShare: gc.trend },
    verdict: reasons.length > 0 ? 'degrading' : 'steady',
    reasons,
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** One line for a window as it closes: its figures and the sparklines so far. */
export function windowLine(windows: SoakWindow[], of: number): string {
  const w = windows.at(-1)!;
  const heaps = windows.map((x) => x.heapUsed ?? 0);
  return (
    `window ${windows.length}/${of} (${w.startSecond}-${w.startSecond + w.seconds} s): ` +
    `${integer(w.requestsPerSecond)} req/s, p99 ${integer(w.latencyP99)} ms, heap ${w.heapUsed === null ? 'n/a' : megabytes(w.heapUsed)}` +
    `   req/s ${sparkline(windows.map((x) => x.requestsPerSecond))}  heap ${sparkline(heaps)}`
  );
}

export async function runSoak(
  baseUrl: string,
  profile: LoadProfile,
  options: SoakOptions,
  /** The probe's samples since the soak began (once a second, figures cumulative since the reset before it). */
  samples: () => RuntimeFigures[],
  onProgress: (progress: LoadProgress) => void,
  sampler?: AnswerSampler,
): Promise<{ load: LoadResult; soak: SoakResult }> {
  const { seconds } = options;
  const windowSeconds = options.windowSeconds ?? defaultWindowSeconds(seconds);
  const windowCount = Math.floor(seconds / windowSeconds) + (seconds % windowSeconds >= windowSeconds / 2 ? 1 : 0);
  const ticks: number[] = [];
  /** Response times by the second they arrived in. */
  const latencies: LatencyCounts[] = [];
  let instance: autocannon.Instance | undefined;
  let exitedAt: number | undefined;

  const result = await runPhase(
    baseUrl,
    profile,
    'measured',
    seconds,
    (progress) => {
      ticks.push(progress.requestsLastSecond);
      // autocannon ends with one more tick after it stopped (0 requests): not a second of load.
      if (ticks.length > seconds || exitedAt !== undefined) return;
      const second = ticks.length;
      const closes = second % windowSeconds === 0 || second === seconds;
      let note: string | undefined;
      let soakWindow: SoakWindow | undefined;
      if (closes) {
        const windows = buildWindows(ticks, latencies, samples(), windowSeconds);
        if (windows.length > 0 && windows.at(-1)!.startSecond + windows.at(-1)!.seconds === second) {
          soakWindow = windows.at(-1)!;
          note = windowLine(windows, windowCount);
        }
      }
      onProgress({ ...progress, second, detail: `window ${Math.min(windowCount, Math.floor((second - 1) / windowSeconds) + 1)}/${windowCount}`, note, soakWindow });
      if (options.serverExited?.()) {
        exitedAt = second;
        instance?.stop();
        onProgress({ ...progress, second, note: `the server exited during second ${second}: the soak stops here` });
      }
    },
    {
      attach: (started) => {
        instance = started;
        // (client, statusCode, resBytes, responseTime): responseTime in ms, for every status code.
        started.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
          countLatency((latencies[Math.min(ticks.length, seconds - 1)] ??= new Map()), responseTime);
        });
      },
      sampler,
    },
  );

  // The last tick is the one autocannon sends after it stopped; an early stop leaves a partial second too.
  const perSecond = ticks.slice(0, Math.min(seconds, ticks.length - 1, exitedAt ?? Infinity));
  const ranSeconds = perSecond.length;
  let soak: SoakResult;
  if (exitedAt === undefined) {
    const windows = buildWindows(perSecond, latencies, samples(), windowSeconds);
    soak = { seconds, windowSeconds, windows, ...soakTrends(windows) };
  } else {
    // The trend up to the exit, from the seconds the server lived through whole, in windows short enough
    // to show one even when it died early; the second it died in is left out.
    const alive = perSecond.slice(0, exitedAt - 1);
    const shorter = Math.min(windowSeconds, defaultWindowSeconds(alive.length));
    const windows = buildWindows(alive, latencies, samples(), shorter).filter((w) => w.seconds === shorter);
    soak = { seconds, windowSeconds: shorter, windows, ...soakTrends(windows), endedAfter: exitedAt };
    soak.verdict = 'degrading';
    const lastHeap = [...windows].reverse().find((w) => w.heapUsed !== null)?.heapUsed;
    soak.reasons.unshift(`the server exited after ${exitedAt} s of ${seconds}` + (lastHeap ? ` (heap at ${megabytes(lastHeap)} just before)` : ''));
  }
  const load: LoadResult = {
    requestsPerSecond: { mean: result.requests.mean, stdev: result.requests.stddev },
    latency: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
    bytesPerSecond: result.throughput.mean,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    answered: result['2xx'],
    perSecond,
    durationSeconds: ranSeconds,
  };
  return { load, soak };
}
