// Puts one listening server under the exercise's load with autocannon, in this (the harness's) process:
// a warm-up phase whose figures are thrown away, then the measured phase.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { REQUEST_ID } from './load-profile.ts';
import type { LoadProfile } from './manifest.ts';
import type { AnswerSampler } from './answers.ts';
import type { AnswerTimeline } from './answer-timeline.ts';
import type { LoadResult, SoakWindow } from './result.ts';
import { percentile } from './stats.ts';

/** 'beside a fresh copy': after the measured phase, in turns with a fresh copy of the server (fresh-copy.ts). */
export type LoadPhase = 'warm-up' | 'measured' | 'in turns' | 'beside a fresh copy';

/**
 * autocannon stops at its first sample after the duration, a second apart by default: a phase of a second
 * or two (a ramp's step, a turn beside a fresh copy) samples this often so that its load ends on time.
 */
export const SHORT_PHASE_SAMPLE_MS = 50;

export interface LoadProgress {
  phase: LoadPhase;
  second: number;
  of: number;
  /** Requests answered during the last second. */
  requestsLastSecond: number;
  /**
   * Milliseconds (fractional, from each response's own time), of the 2xx answers of the last second, for
   * live charts; absent in a second without any.
   */
  latencyLastSecond?: { p50: number; p99: number };
  /** What the load does now, when it changes within the phase: "step 3 of 12, 60 req/s offered". */
  detail?: string;
  /** A line worth keeping in the log, printed on its own line (a soak's window as it closes). */
  note?: string;
  /** A soak's window, as it closes (for live charts). */
  soakWindow?: SoakWindow;
}

export async function runLoad(
  baseUrl: string,
  profile: LoadProfile,
  onProgress: (progress: LoadProgress) => void = () => {},
  /** Called between the phases, e.g. to reset the probe's figures so they cover the measured phase only. */
  beforeMeasured: () => void | Promise<void> = () => {},
  sampler?: AnswerSampler,
  timeline?: AnswerTimeline,
): Promise<LoadResult> {
  const warmup = profile.warmupSeconds > 0 ? await runPhase(baseUrl, profile, 'warm-up', profile.warmupSeconds, onProgress, { timeline }) : undefined;
  await beforeMeasured();
  const perSecond: number[] = [];
  const result = await runPhase(baseUrl, profile, 'measured', profile.durationSeconds, (progress) => {
    // autocannon ends with one more tick, after its counter was reset: 0 requests, not a second of load.
    if (perSecond.length < profile.durationSeconds) perSecond.push(progress.requestsLastSecond);
    onProgress(progress);
  }, { sampler, timeline });
  return {
    requestsPerSecond: { mean: result.requests.mean, stdev: result.requests.stddev },
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    bytesPerSecond: result.throughput.mean,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    answered: (warmup?.['2xx'] ?? 0) + result['2xx'],
    perSecond,
    durationSeconds: profile.durationSeconds,
  };
}

/** The warm-up alone, for the ramp and the soak, which run their own measured phase. */
export async function runWarmup(
  baseUrl: string,
  profile: LoadProfile,
  onProgress: (progress: LoadProgress) => void,
  overallRate?: number,
  timeline?: AnswerTimeline,
): Promise<number> {
  if (!(profile.warmupSeconds > 0)) return 0;
  const result = await runPhase(baseUrl, profile, 'warm-up', profile.warmupSeconds, onProgress, { overallRate, timeline });
  return result['2xx'];
}

export interface PhaseOptions {
  /** Requests per second over all connections (autocannon's rate limiting); unlimited when absent. */
  overallRate?: number;
  /** Called with the running instance, e.g. to listen to its 'response' events or stop it early. */
  attach?: (instance: autocannon.Instance) => void;
  /**
   * autocannon stops at its first sample after the duration, a second apart by default: a short phase
   * samples more often so its load ends on time. The result's per-sample figures are then per this.
   */
  sampleMs?: number;
  /** Keeps a steady sample of the answers (status, headers, body) for the contract check. */
  sampler?: AnswerSampler;
  /** Counts the 2xx answers by the time they arrived, across the phases of one server. */
  timeline?: AnswerTimeline;
}

/** Ids unique across this process's loads: a prefix of its own, then a count. */
const idPrefix = randomBytes(3).toString('hex');
let lastId = 0;

/**
 * A new id, from the same source as the load's (`[<id>]`): a check that asks with one looks to a server
 * like any request of the load.
 */
export function nextRequestId(): string {
  return `${idPrefix}${(++lastId).toString(36)}`;
}

/** autocannon's request for the profile, each with a new id in its path; the id is in the client's context for onResponse. */
function requestWithId(profile: LoadProfile, onResponse?: (status: number, body: string, context: { id?: string }, headers: Record<string, string | string[] | undefined>) => void): autocannon.Request {
  return {
    method: profile.method ?? 'GET',
    body: profile.body,
    headers: profile.headers,
    setupRequest: (request, context: { id?: string }) => {
      context.id = nextRequestId();
      return { ...request, path: profile.path.replaceAll(REQUEST_ID, context.id) };
    },
    ...(onResponse ? { onResponse } : {}),
  } as autocannon.Request;
}

export function runPhase(
  baseUrl: string,
  profile: LoadProfile,
  phase: LoadPhase,
  seconds: number,
  onProgress: (progress: LoadProgress) => void,
  { overallRate, attach, sampleMs, sampler, timeline }: PhaseOptions = {},
): Promise<autocannon.Result> {
  const withIds = profile.path.includes(REQUEST_ID);
  // Each answer with its request's id: the sample keeps it, the timeline counts it by its id.
  const onResponse =
    sampler || timeline
      ? (status: number, body: string, context: { id?: string }, headers: Record<string, string | string[] | undefined>) => {
          sampler?.onResponse(status, body, context, headers);
          if (context.id !== undefined) timeline?.onAnswerWithId(context.id, status);
        }
      : undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl + (withIds ? '/' : profile.path),
        method: profile.method ?? 'GET',
        body: profile.body,
        headers: profile.headers,
        // autocannon builds each answer's body anyway; onResponse hands it over with its headers.
        ...(withIds ? { requests: [requestWithId(profile, onResponse)] } : sampler ? { requests: [{ method: profile.method ?? 'GET', path: profile.path, body: profile.body, headers: profile.headers, onResponse: sampler.onResponse }] } : {}),
        connections: profile.connections,
        duration: seconds,
        ...((overallRate ?? profile.rate) ? { overallRate: overallRate ?? profile.rate } : {}),
        ...(sampleMs ? { sampleInt: sampleMs } : {}),
        // A request still unanswered after this counts as a timeout, which fails the run.
        timeout: 10,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    let second = 0;
    // Each 2xx answer's time this second; sorted once a tick (a few thousand numbers, well under a millisecond).
    let times: number[] = [];
    (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      if (status >= 200 && status < 300) times.push(responseTime);
    });
    // The types declare 'tick' without its argument; autocannon passes { counter, bytes }.
    (instance as unknown as NodeJS.EventEmitter).on('tick', (tick: { counter: number }) => {
      second = Math.min(second + 1, seconds);
      const latencyLastSecond = secondPercentiles(times);
      times = [];
      onProgress({ phase, second, of: seconds, requestsLastSecond: tick.counter, ...(latencyLastSecond ? { latencyLastSecond } : {}) });
    });
    if (sampler) (instance as unknown as NodeJS.EventEmitter).on('response', sampler.onTimed);
    if (timeline) (instance as unknown as NodeJS.EventEmitter).on('response', timeline.onResponse);
    attach?.(instance);
  });
}

/** p50 and p99 (nearest rank) of one second's response times; undefined for an empty second. */
export function secondPercentiles(times: number[]): { p50: number; p99: number } | undefined {
  if (times.length === 0) return undefined;
  return { p50: percentile(times, 0.5)!, p99: percentile(times, 0.99)! };
}
