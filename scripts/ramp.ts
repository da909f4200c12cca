// A ramp: the offered rate climbs in steps, each a few seconds of autocannon's rate limiting, and the knee
// is where the server stops keeping up. autocannon starts each connection's second at the same instant, so
// one instance offering R req/s sends them as a burst of R at once: a queue of its own making, long before
// the server is saturated. Each step therefore runs several instances, their starts spread over a second,
// so the requests arrive in small bursts spread evenly (measured on 09's single process at 80 req/s: p99
// 827 ms with one instance, against its ~10 ms of work).
import type autocannon from 'autocannon';
import { runPhase, type LoadProgress, type LoadResult } from './load.ts';
import type { LoadProfile, RampProfile } from './manifest.ts';
import type { Knee, LatencyFigures, RampResult, RampStep } from './result.ts';

/** Instances per step, at most: their starts are 1000/N ms apart. */
const SPREAD = 20;
/** Each step is measured from this long after its first instance started, once all of them run. */
const LEAD_IN_MS = 1000;
/** A step keeps up when it answers at least this share of the offered rate... */
export const KEEPS_UP_SHARE = 0.9;
/** ...and its p99 stays under this multiple of the first step's. */
export const LATENCY_MULTIPLE = 10;

/** The offered rate of each step: `steps` rates from `from` to `to`, evenly spaced, whole req/s. */
export function stepRates(ramp: RampProfile): number[] {
  const { from, to, steps } = ramp;
  return Array.from({ length: steps }, (_, i) => Math.round(from + ((to - from) * i) / (steps - 1)));
}

export async function runRamp(
  baseUrl: string,
  profile: LoadProfile,
  ramp: RampProfile,
  onProgress: (progress: LoadProgress) => void,
): Promise<{ load: LoadResult; ramp: RampResult }> {
  const rates = stepRates(ramp);
  const planned = rates.length * ramp.stepSeconds;
  const steps: StepFigures[] = [];
  const allLatencies: number[] = [];
  const perSecond: number[] = [];
  for (const [index, offered] of rates.entries()) {
    const detail = `step ${index + 1} of ${rates.length}, ${offered} req/s offered`;
    const step = await runStep(baseUrl, profile, offered, ramp.stepSeconds, (second, requestsLastSecond) =>
      onProgress({ phase: 'measured', second: index * ramp.stepSeconds + second, of: planned, requestsLastSecond, detail }),
    );
    steps.push(step.figures);
    allLatencies.push(...step.latencies);
    perSecond.push(...step.perSecond);
    // Two steps behind in a row: past the knee, the cliff measured. Higher rates would only queue more.
    const low = steps[0]!.latency.p99;
    if (steps.length >= 2 && behindReason(steps.at(-1)!, low) && behindReason(steps.at(-2)!, low)) break;
  }
  const total = steps.length * ramp.stepSeconds;
  const lowLoadP99 = steps[0]!.latency.p99;
  const knee = findKnee(steps, lowLoadP99);
  const highest = steps.at(-1)!;
  const answered = steps.reduce((sum, s) => sum + s.achieved * s.seconds, 0);
  const meanPerSecond = answered / total;
  const load: LoadResult = {
    requestsPerSecond: { mean: meanPerSecond, stdev: stdev(perSecond) },
    latency: latencyFigures(allLatencies),
    bytesPerSecond: steps.reduce((sum, s) => sum + s.bytes, 0) / steps.length,
    requests: allLatencies.length,
    errors: steps.reduce((sum, s) => sum + s.errors, 0),
    timeouts: steps.reduce((sum, s) => sum + s.timeouts, 0),
    non2xx: steps.reduce((sum, s) => sum + s.non2xx, 0),
    answered,
    perSecond,
    durationSeconds: total,
  };
  return {
    load,
    ramp: {
      from: ramp.from,
      to: ramp.to,
      stepSeconds: ramp.stepSeconds,
      steps: steps.map(({ bytes: _bytes, ...step }) => step),
      lowLoadP99,
      knee,
      cliff: lowLoadP99 > 0 ? highest.latency.p99 / lowLoadP99 : undefined,
    },
  };
}

/** Why a step is behind the offered load, or undefined when it kept up. */
export function behindReason(step: RampStep, lowLoadP99: number): string | undefined {
  if (step.achieved < KEEPS_UP_SHARE * step.offered) return `answered ${Math.round(step.achieved)} of ${step.offered} req/s offered`;
  // Latencies from tiny servers are a millisecond or two: a floor keeps 1 ms -> 11 ms from reading as a cliff.
  const limit = LATENCY_MULTIPLE * Math.max(lowLoadP99, 2);
  if (step.latency.p99 > limit) return `p99 ${Math.round(step.latency.p99)} ms, over ${LATENCY_MULTIPLE}x its low-load ${Math.round(lowLoadP99)} ms`;
  return undefined;
}

/**
 * The knee: the last step that kept up (answered ≥ 90% of the offered rate, p99 under 10x the first
 * step's) before the first two steps in a row that did not (or the last step, when it alone did not): one
 * step that falls behind and then recovers is a pause of the machine, not saturation. Undefined when the
 * ramp never got behind, or was behind from its first step.
 */
export function findKnee(steps: RampStep[], lowLoadP99 = steps[0]?.latency.p99 ?? 0): Knee | undefined {
  const first = saturatedFrom(steps, lowLoadP99);
  if (first === undefined || first === 0) return undefined;
  const kept = steps[first - 1]!;
  return { offered: kept.offered, achieved: kept.achieved, step: first - 1, reason: `at ${steps[first]!.offered} req/s it ${behindReason(steps[first]!, lowLoadP99)}` };
}

/** Index of the first step of two behind in a row (or of a behind last step). */
function saturatedFrom(steps: RampStep[], lowLoadP99: number): number | undefined {
  const behind = steps.map((step) => behindReason(step, lowLoadP99) !== undefined);
  const index = behind.findIndex((b, i) => b && (i === steps.length - 1 || behind[i + 1]));
  return index === -1 ? undefined : index;
}

type StepFigures = RampStep & { bytes: number };

interface StepRun {
  figures: StepFigures;
  latencies: number[];
  perSecond: number[];
}

/** One step: `offered` req/s, spread over up to SPREAD instances started 1000/N ms apart. */
async function runStep(
  baseUrl: string,
  profile: LoadProfile,
  offered: number,
  seconds: number,
  onSecond: (second: number, requestsLastSecond: number) => void,
): Promise<StepRun> {
  const count = Math.min(SPREAD, offered);
  // Measured only once every instance runs: from LEAD_IN_MS after the first start, for `seconds`.
  const windowStart = performance.now() + LEAD_IN_MS;
  const windowEnd = windowStart + seconds * 1000;
  const latencies: number[] = [];
  const perSecond = new Array<number>(seconds).fill(0);
  let non2xxInWindow = 0;
  const ticker = setInterval(() => {
    const second = Math.round((performance.now() - windowStart) / 1000);
    if (second >= 1 && second <= seconds) onSecond(second, perSecond[second - 1]!);
  }, 1000);
  setTimeout(() => ticker.refresh(), LEAD_IN_MS).unref();
  const instances = Array.from({ length: count }, (_, i) => {
    // autocannon's own split: the remainder goes to the first ones.
    const rate = Math.floor(offered / count) + (i < offered % count ? 1 : 0);
    const connections = Math.max(1, Math.round(profile.connections / count));
    return new Promise<autocannon.Result>((resolve, reject) => {
      setTimeout(() => {
        // Every instance stops at the window's end.
        const seconds = Math.max(0.1, (windowEnd - performance.now()) / 1000);
        const onResponse = (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
          const now = performance.now();
          if (now < windowStart || now >= windowEnd) return;
          if (statusCode < 200 || statusCode >= 300) {
            non2xxInWindow += 1;
            return;
          }
          latencies.push(responseTime);
          perSecond[Math.floor((now - windowStart) / 1000)]! += 1;
        };
        runPhase(baseUrl, { ...profile, connections }, 'measured', seconds, () => {}, rate, (instance) =>
          (instance as unknown as NodeJS.EventEmitter).on('response', onResponse),
        ).then(resolve, reject);
      }, (i * 1000) / count);
    });
  });
  const results = await Promise.all(instances).finally(() => clearInterval(ticker));
  const sum = (pick: (r: autocannon.Result) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    figures: {
      offered,
      achieved: latencies.length / seconds,
      latency: latencyFigures(latencies),
      // Errors anywhere in the step count, lead-in included: a dropped request is never forgiven.
      errors: sum((r) => r.errors),
      timeouts: sum((r) => r.timeouts),
      non2xx: Math.max(non2xxInWindow, sum((r) => r.non2xx)),
      seconds,
      bytes: sum((r) => r.throughput.total) / ((windowEnd - windowStart + LEAD_IN_MS) / 1000),
    },
    latencies,
    perSecond,
  };
}

export function latencyFigures(values: number[]): LatencyFigures {
  if (values.length === 0) return { p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(sorted.at(-1)!),
    mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}

function stdev(values: number[]): number {
  if (values.length < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1));
}
