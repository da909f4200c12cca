// A real soak, short: a server that runs out of memory part-way (01's real soak, whose pace must fall, is in
// soak-pace.test.ts). It puts load on the machine: run it under the shared lock
// (flock /tmp/hotpath-load.lock npx vitest run test/soak-run.test.ts).
import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import type { Exercise } from '../scripts/exercises.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { fixture } from './helpers.ts';
import { sampleManifest } from './sample.ts';

describe('a real soak', () => {
  it('a server that runs out of memory: the soak stops there, says so, and keeps the trend up to it', async () => {
    const manifest = sampleManifest({ load: { path: '/', connections: 2, warmupSeconds: 1, durationSeconds: 1 } });
    const exercise: Exercise = {
      manifest,
      dir: '',
      solutionsDir: '',
      serverFile: fixture('leaks-until-oom.ts'),
      shippedFile: fixture('leaks-until-oom.ts'),
      stageFile: () => fixture('answers.ts'),
    };
    const started = Date.now();
    const report = await runBench(exercise, [specFor(exercise, 'broken')], { judge: false, measure: { kind: 'soak', soak: { seconds: 40, windowSeconds: 2 } } });
    const elapsed = Date.now() - started;
    const broken = report.servers[0]!;
    expect(broken.nodeFlags).toContain('--max-old-space-size=48');
    expect(broken.failure).toMatch(/crashed during the load \((SIGABRT|exit code 134)\)/);
    expect(broken.output).toMatch(/heap out of memory/);
    const soak = broken.soak!;
    expect(soak.endedAfter).toBeGreaterThan(3);
    expect(soak.endedAfter).toBeLessThan(30);
    // It stopped loading a dead port soon after the exit, not at the planned 40 s.
    expect(elapsed).toBeLessThan(35_000);
    // Whole windows of the seconds it lived through, short enough to show a trend before it died.
    expect(soak.windows.length).toBeGreaterThanOrEqual(3);
    expect(soak.windowSeconds).toBeLessThanOrEqual(2);
    expect(soak.windows.every((w) => w.seconds === soak.windowSeconds && w.startSecond + w.seconds < soak.endedAfter!)).toBe(true);
    expect(soak.trends.heapUsed.degrading).toBe(true);
    expect(soak.verdict).toBe('degrading');
    expect(soak.reasons[0]).toMatch(/^the server exited after \d+ s of 40/);
    // One-second windows near the end may have no probe sample (its event loop stalls in GC): compare those with one.
    const heaps = soak.windows.flatMap((w) => (w.heapUsed === null ? [] : [w.heapUsed]));
    expect(heaps.at(-1)!).toBeGreaterThan(heaps[0]!);
    expect(report.pass).toBe(false);
    expect(liveServerCount()).toBe(0);
  });
});
