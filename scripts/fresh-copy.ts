// What a server keeps of its speed as it ages (throughputKept), measured against a fresh copy of itself.
// Comparing a server's last seconds with its first compares two moments of the machine as well: here its
// speed moves by a third for several seconds at a time, and a fixed server read 0.58x and 0.65x its own
// first seconds. So after the measured phase a second copy of the same file is started and warmed up, and
// the two are loaded in turns, one second each, in the order AB BA AB...: each second of the aged server
// has a second of the fresh one beside it on the same machine.
import type { LoadProfile } from './manifest.ts';
import { runPhase, runWarmup, SHORT_PHASE_SAMPLE_MS, type LoadProgress } from './load.ts';
import type { FreshCopyResult } from './result.ts';
import { startServer, type RunningServer, type StartOptions } from './server-process.ts';
import { median } from './stats.ts';

/** Starts a fresh copy of the aged server as it was started, compares the two (below), and stops the copy. */
export async function besideFreshCopy(
  file: string,
  startOptions: StartOptions,
  aged: RunningServer,
  profile: LoadProfile,
  pairs: number,
  onProgress: (progress: LoadProgress) => void,
): Promise<FreshCopyResult> {
  const copy = await startServer(file, startOptions);
  try {
    const result = await compareWithFreshCopy(aged.url, copy.url, profile, pairs, onProgress);
    if (copy.exit()) throw new Error(`the fresh copy of the server crashed (${copy.exit()!.signal ?? `exit code ${copy.exit()!.code}`})\n${copy.output()}`);
    return result;
  } finally {
    await copy.stop();
  }
}

/**
 * Warms the fresh copy up as the aged server was, then loads the two in turns, `pairs` seconds each;
 * returns each turn's req/s.
 */
export async function compareWithFreshCopy(
  agedUrl: string,
  freshUrl: string,
  profile: LoadProfile,
  pairs: number,
  onProgress: (progress: LoadProgress) => void,
): Promise<FreshCopyResult> {
  const warmup = profile.warmupSeconds;
  const of = warmup + 2 * pairs;
  await runWarmup(freshUrl, profile, (progress) =>
    onProgress({ ...progress, phase: 'beside a fresh copy', of, detail: 'the fresh copy warms up' }),
  );
  const aged: number[] = [];
  const fresh: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    // ABBA: a drift of the machine's speed over the pairs weighs on both servers alike.
    const order = pair % 2 === 0 ? (['aged', 'fresh'] as const) : (['fresh', 'aged'] as const);
    for (const which of order) {
      const rate = await oneSecond(which === 'aged' ? agedUrl : freshUrl, profile);
      (which === 'aged' ? aged : fresh).push(rate);
    }
    onProgress({
      phase: 'beside a fresh copy',
      second: warmup + 2 * (pair + 1),
      of,
      requestsLastSecond: aged.at(-1)!,
      detail: `turn ${pair + 1} of ${pairs}: aged ${Math.round(aged.at(-1)!)} req/s, fresh copy ${Math.round(fresh.at(-1)!)} req/s`,
    });
  }
  return { aged, fresh, kept: keptOf(aged, fresh) };
}

/** The aged server's median second over the fresh copy's. */
export function keptOf(aged: number[], fresh: number[]): number | undefined {
  if (aged.length === 0 || fresh.length === 0) return undefined;
  const base = median(fresh);
  return base > 0 ? median(aged) / base : undefined;
}

/** Requests answered (2xx) per second over one second of the exercise's load. */
async function oneSecond(url: string, profile: LoadProfile): Promise<number> {
  const result = await runPhase(url, profile, 'measured', 1, () => {}, { sampleMs: SHORT_PHASE_SAMPLE_MS });
  return result.duration > 0 ? result['2xx'] / result.duration : 0;
}
