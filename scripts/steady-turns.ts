// The steady load, servers in turns: every server of one verdict is started and warmed up, then each is
// loaded for a few seconds in turn, round after round, so a drift of the machine's speed (a third for
// seconds at a time on a shared host) weighs on all of them alike. Each turn keeps its own figures (the
// load's and the probe's); a ratio is then taken round by round (see verdict.ts). After the fewest rounds,
// more are run while `decided` says a target is still too close to call, up to the most allowed. A shipped
// server whose bug grows with the requests it serves stops after `brokenRounds`, the same age in every run.
import type autocannon from 'autocannon';
import type { AnswerTimeline } from './answer-timeline.ts';
import type { AnswerSampler } from './answers.ts';
import { runPhase, runWarmup, SHORT_PHASE_SAMPLE_MS, type LoadProgress } from './load.ts';
import { DEFAULT_TURNS, type LoadProfile } from './manifest.ts';
import type { GcKindFigures, RuntimeFigures } from './probe/messages.ts';
import { RestMeter } from './between-turns.ts';
import { OthersMeter } from './others-during-turns.ts';
import { ProcessMeter } from './process-figures.ts';
import type { LoadResult, ServerRun, TurnFigures } from './result.ts';
import type { RunningServer } from './server-process.ts';
import { waitUntilIdle } from './idle.ts';
import { median, percentile, sd } from './stats.ts';
import { heapTrend, type HeapTrend } from './trend.ts';

/** A turn's heap slope is fitted on the lowest sample of each half second (the probe samples faster then). */
const HEAP_WINDOW_MS = 500;

export interface Contender {
  run: ServerRun;
  server: RunningServer;
  sampler: AnswerSampler;
  timeline: AnswerTimeline;
}

export interface TurnsOptions {
  /**
   * Whether every target can be called on the rounds so far; asked after each round from the fewest on.
   * `done(label)`: that server takes no more turns, so its ratios will not change.
   */
  decided(done: (label: string) => boolean): boolean;
  onProgress(label: string, progress: LoadProgress): void;
  /** Called when a server crashed during its turn; it takes no more turns. */
  onCrash(contender: Contender): void;
}

/** The turns' settings of a load profile, with their defaults. */
export function turnsOf(profile: LoadProfile): typeof DEFAULT_TURNS & { brokenRounds: number } {
  const { seconds = DEFAULT_TURNS.seconds, minRounds = DEFAULT_TURNS.minRounds, maxRounds = DEFAULT_TURNS.maxRounds } = profile.turns || {};
  const brokenRounds = (profile.turns && profile.turns.brokenRounds) || maxRounds;
  return { seconds, minRounds, maxRounds, brokenRounds };
}

/** The load of a turn: the profile's, with the turns' own connections when it sets them. */
export function turnLoad(profile: LoadProfile): LoadProfile {
  const connections = profile.turns ? profile.turns.connections : undefined;
  return connections ? { ...profile, connections } : profile;
}

/** Warms every server up in turn (then waits for it to go idle when the profile asks). Returns each one's 2xx answers. */
export async function warmUpInTurns(contenders: Contender[], manifestLoad: LoadProfile, onProgress: TurnsOptions['onProgress']): Promise<number[]> {
  const profile = turnLoad(manifestLoad);
  const answered: number[] = [];
  for (const { run, server, timeline } of contenders) {
    answered.push(await runWarmup(server.url, profile, (progress) => onProgress(run.label, progress), undefined, timeline));
    if (profile.settleAfterWarmup) await waitUntilIdle(server);
  }
  return answered;
}

/** Loads the servers in turns, round after round; each run's `turns` gets its figures. Returns the rounds run. */
export async function loadInTurns(contenders: Contender[], manifestLoad: LoadProfile, options: TurnsOptions): Promise<number> {
  const { seconds, minRounds, maxRounds, brokenRounds } = turnsOf(manifestLoad);
  const profile = turnLoad(manifestLoad);
  let live = [...contenders];
  // Each server's processes over its turns only, not while the others take theirs.
  const meters = new Map(contenders.map((c) => [c, new ProcessMeter(c.server)]));
  // And while the others take theirs, from the end of its turn to the start of its next (between-turns.ts).
  const resting = new Map(contenders.map((c) => [c, new RestMeter(c.server)]));
  // And what the rest of the machine did during each turn (others-during-turns.ts).
  const others = new OthersMeter(contenders.map((c) => c.server));
  let round = 0;
  const takesTurns = (r: number) => live.filter((c) => c.run.role !== 'broken' || r < brokenRounds);
  const done = (label: string) => round >= maxRounds || !takesTurns(round).some((c) => c.run.label === label);
  while (round < maxRounds && takesTurns(round).length > 0) {
    // Each round starts with another server and odd rounds run backwards, so no server always follows the same one.
    const inRound = takesTurns(round);
    const rotated = inRound.map((_, i) => inRound[(i + round) % inRound.length]!);
    const order = round % 2 === 1 ? rotated.reverse() : rotated;
    for (const contender of order) {
      const { run, server, sampler, timeline } = contender;
      resting.get(contender)!.end();
      server.resetFigures();
      const sampledFrom = server.samples.length;
      meters.get(contender)!.begin();
      others.begin();
      const load = await oneTurn(server.url, profile, seconds, sampler, timeline);
      const othersCores = others.end();
      const processes = meters.get(contender)!.lap();
      // Its turns so far: a target read from them (cores used) is judged between rounds too.
      run.processes = meters.get(contender)!.total();
      // One point per turn for the live charts: x is the server's seconds of turns so far.
      options.onProgress(run.label, {
        phase: 'in turns',
        second: (round + 1) * seconds,
        of: (run.role === 'broken' ? brokenRounds : maxRounds) * seconds,
        requestsLastSecond: load.requestsPerSecond.mean,
        ...(load.answered > 0 ? { latencyLastSecond: { p50: load.latency.p50, p99: load.latency.p99 } } : {}),
        detail: `round ${round + 1} (${run.role === 'broken' && brokenRounds < maxRounds ? `its last at ${brokenRounds}` : `at least ${minRounds}, at most ${maxRounds}`}), ${seconds} s a turn`,
      });
      const runtime = await server.snapshot();
      // The probe's samples since the reset: wallMs counts from the turn's start.
      const heap = heapTrend(server.samples.slice(sampledFrom), HEAP_WINDOW_MS);
      (run.turns ??= []).push({ round, load, processes, ...(othersCores !== undefined ? { othersCores } : {}), ...(runtime ? { runtime } : {}), ...(heap ? { heap } : {}) });
      // Its rest begins as its turn ends: work after the load, even the turn's own last answers, is
      // not paid for in its turns (a server could otherwise work ahead while it is waited for).
      resting.get(contender)!.begin();
      // A server still working on the turn's abandoned requests would slow the next one's turn.
      if (profile.settleAfterWarmup) await waitUntilIdle(server);
      if (server.exit()) {
        options.onCrash(contender);
        live = live.filter((c) => c !== contender);
      }
    }
    round += 1;
    if (round >= minRounds && options.decided(done)) break;
  }
  for (const contender of contenders) {
    const rest = resting.get(contender)!;
    rest.end();
    const betweenTurns = rest.figures();
    if (betweenTurns) contender.run.betweenTurns = betweenTurns;
  }
  return round;
}

/** One server's turn: the profile's load for `seconds`, with each answer's time and a sample of the answers. */
async function oneTurn(url: string, profile: LoadProfile, seconds: number, sampler: AnswerSampler, timeline: AnswerTimeline): Promise<LoadResult> {
  const times: number[] = [];
  const attach = (instance: autocannon.Instance) =>
    (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, status: number, _b: number, responseTime: number) => {
      if (status >= 200 && status < 300) times.push(responseTime);
    });
  const result = await runPhase(url, profile, 'in turns', seconds, () => {}, { attach, sampler, timeline, sampleMs: SHORT_PHASE_SAMPLE_MS });
  const elapsed = result.duration > 0 ? result.duration : seconds;
  const rate = result['2xx'] / elapsed;
  return {
    requestsPerSecond: { mean: rate, stdev: 0 },
    latency: {
      p50: percentile(times, 0.5) ?? 0,
      p90: percentile(times, 0.9) ?? 0,
      p99: percentile(times, 0.99) ?? 0,
      max: times.length > 0 ? Math.max(...times) : 0,
      mean: times.length > 0 ? times.reduce((a, b) => a + b, 0) / times.length : 0,
    },
    bytesPerSecond: result.throughput.total / elapsed,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    answered: result['2xx'],
    perSecond: [rate],
    durationSeconds: elapsed,
  };
}

/** A server's figures over all its turns: counts summed; rates and percentiles the median of its turns. */
export function combineTurns(turns: TurnFigures[], warmupAnswered: number): LoadResult | undefined {
  if (turns.length === 0) return undefined;
  const loads = turns.map((t) => t.load);
  const sum = (pick: (l: LoadResult) => number) => loads.reduce((total, l) => total + pick(l), 0);
  const mid = (pick: (l: LoadResult) => number) => median(loads.map(pick));
  return {
    requestsPerSecond: { mean: mid((l) => l.requestsPerSecond.mean), stdev: sd(loads.map((l) => l.requestsPerSecond.mean)) },
    latency: { p50: mid((l) => l.latency.p50), p90: mid((l) => l.latency.p90), p99: mid((l) => l.latency.p99), max: Math.max(...loads.map((l) => l.latency.max)), mean: mid((l) => l.latency.mean) },
    bytesPerSecond: mid((l) => l.bytesPerSecond),
    requests: sum((l) => l.requests),
    errors: sum((l) => l.errors),
    timeouts: sum((l) => l.timeouts),
    non2xx: sum((l) => l.non2xx),
    answered: warmupAnswered + sum((l) => l.answered),
    perSecond: loads.map((l) => l.requestsPerSecond.mean),
    durationSeconds: sum((l) => l.durationSeconds),
  };
}

/** The probe's figures over all of a server's turns: times and counts summed, peaks the highest, the heap the last. */
export function combineRuntime(figures: RuntimeFigures[]): RuntimeFigures | undefined {
  if (figures.length === 0) return undefined;
  const wallMs = figures.reduce((total, f) => total + f.wallMs, 0);
  const gcKind = (pick: (f: RuntimeFigures) => GcKindFigures): GcKindFigures => {
    const count = figures.reduce((total, f) => total + pick(f).count, 0);
    const ms = figures.reduce((total, f) => total + pick(f).ms, 0);
    return { count, ms, share: wallMs > 0 ? ms / wallMs : 0 };
  };
  const peaks = (pick: (f: RuntimeFigures) => Record<string, number> | undefined): Record<string, number> | undefined => {
    const all = figures.map(pick).filter((p) => p !== undefined);
    if (all.length === 0) return undefined;
    const out: Record<string, number> = {};
    for (const peak of all) for (const [type, count] of Object.entries(peak)) out[type] = Math.max(out[type] ?? 0, count);
    return out;
  };
  const last = figures.at(-1)!;
  const pendingPeak = peaks((f) => f.pendingPeak);
  return {
    ...last,
    wallMs,
    gc: { minor: gcKind((f) => f.gc.minor), major: gcKind((f) => f.gc.major), other: gcKind((f) => f.gc.other) },
    eventLoopDelay: { ...last.eventLoopDelay, p99: median(figures.map((f) => f.eventLoopDelay.p99)), max: Math.max(...figures.map((f) => f.eventLoopDelay.max)) },
    activeResourcesPeak: peaks((f) => f.activeResourcesPeak) ?? {},
    ...(pendingPeak ? { pendingPeak } : {}),
  };
}

/** A server's heap over its turns: the median turn's slope (each turn's slope is fitted within it). */
export function combineHeap(turns: TurnFigures[]): HeapTrend | undefined {
  const trends = turns.map((t) => t.heap).filter((h) => h !== undefined);
  if (trends.length === 0) return undefined;
  return {
    bytesPerSecond: median(trends.map((h) => h.bytesPerSecond)),
    first: trends[0]!.first,
    last: trends.at(-1)!.last,
    peak: Math.max(...trends.map((h) => h.peak)),
    points: trends.reduce((total, h) => total + h.points, 0),
  };
}
