// What a server keeps of its speed as it ages (throughputKept), measured against a fresh copy of itself.
// Comparing a server's last seconds with its first compares two moments of the machine as well: here its
// speed moves by a third for several seconds at a time, and a fixed server read 0.58x and 0.65x its own
// first seconds. So after the measured phase a second copy of the same file is started and warmed up, and
// the two are loaded in turns, one second each, aged then fresh, again and again: each second of the aged
// server is set against the fresh copy's seconds right before and right after it on the same machine.
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
    // Always aged, then fresh: no server has two seconds in a row, so a slow spell of two seconds takes
    // one second of each (keptOf says why that matters).
    aged.push(await oneSecond(agedUrl, profile));
    fresh.push(await oneSecond(freshUrl, profile));
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

/**
 * The median of the ratios of each aged second to the fresh copy's seconds next to it (the one before and
 * the one after, in the order aged, fresh, aged, fresh...). A slow spell of the machine of up to three
 * seconds moves at most two of the ratios (of five, with three pairs) and leaves the median among the
 * others; a steady drift makes the ratios on one side a little high and on the other a little low. The
 * medians of each server's seconds on their own did not hold: a spell over two of the aged server's
 * seconds moved its median.
 */
export function keptOf(aged: number[], fresh: number[]): number | undefined {
  const ratios = besideRatios(aged, fresh);
  return ratios.length > 0 ? median(ratios) : undefined;
}

/** Each aged second over the fresh copy's second before it and after it (keptOf takes their median). */
export function besideRatios(aged: number[], fresh: number[]): number[] {
  const ratios: number[] = [];
  aged.forEach((rate, i) => {
    for (const beside of [fresh[i - 1], fresh[i]]) if (beside !== undefined && beside > 0) ratios.push(rate / beside);
  });
  return ratios;
}

/** Requests answered (2xx) per second over one second of the exercise's load. */
async function oneSecond(url: string, profile: LoadProfile): Promise<number> {
  const result = await runPhase(url, profile, 'measured', 1, () => {}, { sampleMs: SHORT_PHASE_SAMPLE_MS });
  return result.duration > 0 ? result['2xx'] / result.duration : 0;
}
