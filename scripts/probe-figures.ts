// The injected probe's figures over the measured phase only: reset as the phase begins (once the server
// has worked off what the warm-up left, when the exercise asks), read as it ends.
import { waitUntilIdle } from './idle.ts';
import type { LoadProfile } from './manifest.ts';
import type { ServerRun } from './result.ts';
import type { RunningServer } from './server-process.ts';
import { heapTrend } from './trend.ts';

/** Resets the probe's figures as the measured phase begins; returns where its samples begin. */
export async function resetFigures(server: RunningServer, profile: LoadProfile): Promise<number> {
  if (profile.settleAfterWarmup) await waitUntilIdle(server);
  server.resetFigures();
  return server.samples.length;
}

/** The probe's figures as the measured phase ends: its snapshot, and the heap's trend over the samples from `from`. */
export async function measuredFigures(server: RunningServer, from: number, profile: LoadProfile): Promise<Pick<ServerRun, 'runtime' | 'heap'>> {
  const runtime = await server.snapshot();
  // Samples are taken once a second; the first after the reset may still cover the warm-up.
  // Windows of a quarter of the phase (3 s at most) for the heap's low points, so a short phase has four.
  const heap = heapTrend(server.samples.slice(from + 1), Math.min(3000, (profile.durationSeconds * 1000) / 4));
  return { runtime, heap };
}
