// A ramp: the offered rate climbs in steps, each a few seconds of autocannon's rate limiting, and the knee
// is where the server stops keeping up. autocannon starts each connection's second at the same instant, so
// one instance offering R req/s sends them as a burst of R at once: a queue of its own making, long before
// the server is saturated. Each step therefore runs several instances, their starts spread over a second,
// so the requests arrive in small bursts spread evenly (measured on 09's single process at 80 req/s: p99
// 827 ms with one instance, against its ~10 ms of work).
import type autocannon from 'autocannon';
import { runPhase, SHORT_PHASE_SAMPLE_MS, type LoadProgress } from './load.ts';
import { coresElsewhere, cpuSnapshot, waitForQuietMachine, type CpuSnapshot } from './machine-load.ts';
import type { LoadProfile, RampProfile } from './manifest.ts';
import type { Knee, LatencyFigures, LoadResult, RampResult, RampStep } from './result.ts';
import { ALONE, type TurnTaker } from './turns.ts';

/** Instances per step, at most: their starts are 1000/N ms apart. */
const SPREAD = 20;
/** Each step is measured from this long after its first instance started, once all of them run. */
const LEAD_IN_MS = 1000;
/** A step keeps up when it answers at least this share of the offered rate... */
export const KEEPS_UP_SHARE = 0.9;
/** ...and its p99 stays under this multiple of the low-load p99. */
export const LATENCY_MULTIPLE = 10;
/** The settle's rates are the climb's step divided by this: the knee is placed within a third of a step. */
export const SETTLE_DIVISIONS = 3;
/** The most steps the settle takes, tries again included, before it settles for what it has. */
const SETTLE_MAX_STEPS = 7;
/**
 * Other programs using more than this many cores during a step that decides something (the low-load
 * step, a step behind) make it measured again, once they are done or QUIET_WAIT_MS later, up to
 * BUSY_REMEASURES times a ramp. A build or a browser on a 2-core machine halves what a server answers.
 */
export const BUSY_CORES = 0.25;
const QUIET_WAIT_MS = 3000;
const BUSY_REMEASURES = 3;
/** After a step behind, a wait for this share of the time its queue takes to work off, at most DRAIN_LIMIT_MS. */
const DRAIN_SHARE = 0.6;
const DRAIN_LIMIT_MS = 2000;

/** The offered rate of each step: `steps` rates from `from` to `to`, evenly spaced, whole req/s. */
export function stepRates(ramp: RampProfile): number[] {
  const { from, to, steps } = ramp;
  return Array.from({ length: steps }, (_, i) => Math.round(from + ((to - from) * i) / (steps - 1)));
}

/** What `run --ramp` asks for; the rest comes from the exercise's ramp, or from what the warm-up reached. */
export interface RampRequest {
  from?: number;
  to?: number;
  /** Sets the number of the climb's rates: one per step's seconds of this (`--over`). */
  seconds?: number;
}

const DEFAULT_STEP_SECONDS = 2;
const DEFAULT_STEPS = 10;

/**
 * The ramp to run: the request over the exercise's own ramp. An exercise without one is ramped from 10% to
 * 200% of the rate its warm-up reached at full load (`warmupRate`), so the knee falls inside.
 */
export function resolveRamp(request: RampRequest, base: RampProfile | undefined, warmupRate?: number): RampProfile {
  const stepSeconds = base?.stepSeconds ?? DEFAULT_STEP_SECONDS;
  const steps = request.seconds !== undefined ? Math.max(2, Math.round(request.seconds / stepSeconds)) : (base?.steps ?? DEFAULT_STEPS);
  const reached = Math.max(10, Math.round(warmupRate ?? 0));
  const from = request.from ?? base?.from ?? Math.max(1, Math.round(reached * 0.1));
  // The warm-up runs on a cold JIT, so the server's top rate is usually above what it reached there.
  const to = request.to ?? base?.to ?? Math.max(from + steps, Math.round(reached * 2));
  return { from, to: Math.max(to, from + 1), steps, stepSeconds };
}

/**
 * The ramp, in two parts.
 * - The climb brackets the knee: the first rate for twice a step's time (its p99 is the low-load p99, the
 *   latency limit of every later step), then the rates up in steps of half the window, until two in a row
 *   are behind; the first of those is tried again once, as a pause of the machine can last two steps. The
 *   second shows the queueing cliff past the knee.
 * - The settle places it: from a third of a climb step above the last rate kept up, in thirds of a step, up
 *   while the rates keep up or down until one does. A rate behind is tried again (a slow moment of the
 *   machine can make a step fall behind, never keep up); one kept try is enough. The knee is taken from
 *   these steps, interpolated between the last kept up and the next (see `crossing`).
 * Servers measured side by side (`turns`) take turns step by step and settle together: the steps that
 * place their knees alternate, seconds apart, on the same machine, where one ramp after the other they
 * would see a machine whose speed has drifted by a quarter or more.
 */
export async function runRamp(
  baseUrl: string,
  profile: LoadProfile,
  ramp: RampProfile,
  onProgress: (progress: LoadProgress) => void,
  turns: TurnTaker = ALONE,
): Promise<{ load: LoadResult; ramp: RampResult }> {
  const rates = stepRates(ramp);
  // An estimate for the progress line: the climb to the top, the longer first step, a typical settle.
  const planned = (rates.length + 4) * ramp.stepSeconds;
  const steps: StepFigures[] = [];
  const allLatencies: number[] = [];
  const perSecond: number[] = [];
  let done = 0;
  let count = 0;
  // Steps measured while other programs kept the machine busy, measured again (see BUSY_CORES).
  const remeasured: StepFigures[] = [];
  const isBehind = (step: RampStep) => behindReason(step, lowLoadOf(steps)) !== undefined;
  // Requests still queued when a step behind ends (at most one per connection) are mostly worked off before
  // the next step: the rest during its lead-in, while its load is still coming up.
  const drain = (step: StepFigures) =>
    new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_LIMIT_MS, (DRAIN_SHARE * 1000 * profile.connections) / Math.max(step.achieved, 1))));
  const runOnce = async (offered: number, detail: string, seconds: number): Promise<StepFigures> => {
    const from = done;
    const onSecond = (second: number, requestsLastSecond: number) =>
      onProgress({ phase: 'measured', second: from + second, of: Math.max(planned, from + seconds), requestsLastSecond, detail });
    const step = await runStep(baseUrl, profile, offered, seconds, onSecond);
    done += seconds;
    allLatencies.push(...step.latencies);
    perSecond.push(...step.perSecond);
    if (isBehind(step.figures)) await drain(step.figures);
    return step.figures;
  };
  /** One step, in its turn; measured again when other programs were busy and it decides something. */
  const measure = (offered: number, what: string, settle = false, seconds = ramp.stepSeconds): Promise<StepFigures> =>
    turns.take(async () => {
      for (;;) {
        const detail = `step ${++count}, ${offered} req/s offered${what}`;
        const measured = await runOnce(offered, detail, seconds);
        const figures = settle ? { ...measured, settle } : measured;
        // The low-load reference and a step behind decide something; a step kept up on a busy machine
        // would keep up on a quiet one too.
        const decides = steps.length === 0 || isBehind(figures);
        const busy = figures.elsewhere ?? 0;
        if (busy > BUSY_CORES && decides && remeasured.length < BUSY_REMEASURES) {
          remeasured.push(figures);
          const waited = await waitForQuietMachine(BUSY_CORES, QUIET_WAIT_MS);
          const note = `${offered} req/s: other programs used ${busy.toFixed(1)} cores of the machine during the step; measuring it again${waited >= 1000 ? ` (waited ${(waited / 1000).toFixed(0)} s for them)` : ''}`;
          onProgress({ phase: 'measured', second: done, of: Math.max(planned, done), requestsLastSecond: 0, detail, note });
          continue;
        }
        steps.push(figures);
        return figures;
      }
    });

  // The climb, in steps of half the window: it only brackets the knee. The first step is twice as long
  // instead: its p99 is the low-load p99, the latency limit of every later step.
  const climbSeconds = Math.max(1, Math.round(ramp.stepSeconds / 2));
  await measure(rates[0]!, ', low load', false, 2 * ramp.stepSeconds);
  let firstBehind: number | undefined;
  let triedAgain = false;
  for (const offered of isBehind(steps[0]!) ? [] : rates.slice(1)) {
    if (!isBehind(await measure(offered, '', false, climbSeconds))) {
      firstBehind = undefined;
      continue;
    }
    if (firstBehind === undefined) {
      firstBehind = offered;
      continue;
    }
    // Two in a row behind. Once a climb, the first of them again: a pause of the machine can last two steps.
    if (triedAgain) break;
    triedAgain = true;
    if (isBehind(await measure(firstBehind, ', again (behind the first time)', false, climbSeconds))) break;
    firstBehind = offered;
  }
  // The settle, alongside the other servers': from a third of a climb step above the last rate kept up,
  // up while the rates keep up, or down until one does. A rate behind is tried again in the server's next
  // turn (a slow moment of the machine makes a step fall behind, never keep up); one kept try is enough.
  await turns.meet();
  const climbStep = rates.length > 1 ? rates[1]! - rates[0]! : ramp.to - ramp.from;
  const delta = Math.max(1, Math.round(climbStep / SETTLE_DIVISIONS));
  let budget = SETTLE_MAX_STEPS;
  const keepsUp = async (offered: number): Promise<boolean | undefined> => {
    for (let tries = 0; tries < 2; tries++) {
      if (budget-- <= 0) return undefined;
      if (!isBehind(await measure(offered, tries === 0 ? ', placing the knee' : ', placing the knee, again (behind the first time)', true))) return true;
    }
    return false;
  };
  if (firstBehind !== undefined) {
    let offered = firstBehind - climbStep + delta;
    const up = await keepsUp(offered);
    while (up !== undefined) {
      offered += up ? delta : -delta;
      if (offered < ramp.from) break;
      // Up: until a rate is behind twice. Down: until one keeps up. Or the budget is spent.
      if ((await keepsUp(offered)) !== up) break;
    }
  }

  const total = done;
  const lowLoadP99 = lowLoadOf(steps);
  // Shown by rate, lowest first (the order they ran in is in the load's per-second figures).
  const byRate = [...steps].sort((a, b) => a.offered - b.offered);
  const knee = findKnee(byRate, lowLoadP99);
  const highest = byRate.at(-1)!;
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
      // Each step says whether it kept up, and why not, as the ramp judged it: the report only shows it.
      steps: byRate.map(({ bytes: _bytes, ...step }) => ({ ...step, behind: behindReason(step, lowLoadP99) })),
      ...(remeasured.length > 0 ? { remeasured: remeasured.map(({ bytes: _bytes, ...step }) => step) } : {}),
      lowLoadP99,
      knee,
      cliff: lowLoadP99 > 0 ? highest.latency.p99 / lowLoadP99 : undefined,
    },
  };
}

/** The low-load p99: the p99 of the step at the lowest rate (the first; of several, the lowest p99). */
export function lowLoadOf(steps: RampStep[]): number {
  if (steps.length === 0) return 0;
  const lowest = Math.min(...steps.map((s) => s.offered));
  return Math.min(...steps.filter((s) => s.offered === lowest).map((s) => s.latency.p99));
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
 * The knee: the highest offered rate kept up with (answered ≥ 90% of it, p99 under 10x the low-load p99)
 * below the lowest rate that fell behind on every try, two tries at least, or that was the highest tried.
 * When some steps were measured to place the knee (`settle`), it is taken from those alone; else (or when
 * they place none) from all. Undefined when the ramp never got behind, or was behind from its first rate.
 * Steps in any order.
 */
export function findKnee(steps: RampStep[], lowLoadP99 = lowLoadOf(steps)): Knee | undefined {
  const settled = steps.filter((s) => s.settle);
  return (settled.length > 0 ? kneeAmong(settled, steps, lowLoadP99) : undefined) ?? kneeAmong(steps, steps, lowLoadP99);
}

/** findKnee's rule on `among`; the knee's index is into `steps`. */
function kneeAmong(among: RampStep[], steps: RampStep[], lowLoadP99: number): Knee | undefined {
  const rates = [...new Set(among.map((s) => s.offered))].sort((a, b) => a - b);
  const tries = (rate: number) => among.filter((s) => s.offered === rate);
  const keptUp = (rate: number) => tries(rate).some((s) => behindReason(s, lowLoadP99) === undefined);
  const saturated = rates.find((rate, i) => !keptUp(rate) && (tries(rate).length >= 2 || i === rates.length - 1));
  if (saturated === undefined) return undefined;
  const kneeRate = rates.filter((rate) => rate < saturated && keptUp(rate)).at(-1);
  if (kneeRate === undefined) return undefined;
  const kept = among.find((s) => s.offered === kneeRate && behindReason(s, lowLoadP99) === undefined)!;
  // Every rate between the knee and the saturated one was behind: the next one up says why.
  const next = rates.find((rate) => rate > kneeRate)!;
  const nextTries = tries(next);
  const why = behindReason(nextTries.at(-1)!, lowLoadP99);
  const times = nextTries.length > 1 ? ` (${nextTries.length} tries)` : '';
  // Of several tries behind, the one that got furthest: a slow moment only makes a step worse.
  const rate = Math.round(Math.max(...nextTries.map((behind) => crossing(kept, behind, lowLoadP99))) * 10) / 10;
  return { offered: kept.offered, achieved: kept.achieved, rate, step: steps.indexOf(kept), reason: `at ${next} req/s it ${why}${times}` };
}

/**
 * Where between a step kept up and the next rate's step behind the server stopped keeping up: the offered
 * rate at which the answered share falls to KEEPS_UP_SHARE or the p99 rises to its limit, on a straight
 * line between the two steps (the p99's on a log scale, as it grows by factors past the knee). Takes the
 * knee off the grid of rates tried: measured side by side, two servers a fraction of a step apart no
 * longer read a whole step apart.
 */
export function crossing(kept: RampStep, behind: RampStep, lowLoadP99: number): number {
  let at = 1;
  const [shareKept, shareBehind] = [Math.min(1, kept.achieved / kept.offered), behind.achieved / behind.offered];
  if (shareBehind < KEEPS_UP_SHARE && shareKept > shareBehind) at = Math.min(at, (shareKept - KEEPS_UP_SHARE) / (shareKept - shareBehind));
  const limit = LATENCY_MULTIPLE * Math.max(lowLoadP99, 2);
  const [p99Kept, p99Behind] = [Math.max(kept.latency.p99, 0.5), behind.latency.p99];
  if (p99Behind > limit && p99Behind > p99Kept) at = Math.min(at, Math.log(limit / p99Kept) / Math.log(p99Behind / p99Kept));
  return kept.offered + (behind.offered - kept.offered) * Math.min(1, Math.max(0, at));
}

type StepFigures = RampStep & { bytes: number };

interface StepRun {
  figures: StepFigures;
  latencies: number[];
  perSecond: number[];
}

/** One step: `offered` req/s, spread over up to SPREAD instances started 1000/N ms apart, measured for `seconds`. */
export async function runStep(
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
  let atStart: CpuSnapshot | undefined;
  setTimeout(() => {
    ticker.refresh();
    atStart = cpuSnapshot();
  }, LEAD_IN_MS).unref();
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
        const attach = (instance: autocannon.Instance) => (instance as unknown as NodeJS.EventEmitter).on('response', onResponse);
        runPhase(baseUrl, { ...profile, connections }, 'measured', seconds, () => {}, { overallRate: rate, attach, sampleMs: SHORT_PHASE_SAMPLE_MS }).then(resolve, reject);
      }, (i * 1000) / count);
    });
  });
  const results = await Promise.all(instances).finally(() => clearInterval(ticker));
  const atEnd = cpuSnapshot();
  const elsewhere = atStart && atEnd ? Math.round(coresElsewhere(atStart, atEnd) * 100) / 100 : undefined;
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
      ...(elsewhere !== undefined ? { elsewhere } : {}),
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
