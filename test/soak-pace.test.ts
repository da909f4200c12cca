// A real soak of 01's broken server for 8 s. Its pace must fall as the soak goes on: a trend another load on the
// machine could flatten, so it runs with the measurements, one at a time (see vitest.config.ts). Under the
// shared lock: flock /tmp/hotpath-load.lock npx vitest run test/soak-pace.test.ts
import { describe, expect, it } from 'vitest';
import { runBench, specFor, type BenchEvent } from '../scripts/bench.ts';
import { loadExercise } from '../scripts/exercises.ts';
import { liveServerCount } from '../scripts/server-process.ts';

describe('a real soak', () => {
  it("01's broken server for 8 s: a window every 3 s with the probe's figures, progress as each closes, nothing left running", async () => {
    const exercise = await loadExercise('01-seed-service-slows-down');
    const events: BenchEvent[] = [];
    const started = Date.now();
    const report = await runBench(exercise, [specFor(exercise, 'broken')], {
      judge: false,
      measure: { kind: 'soak', soak: { seconds: 8, windowSeconds: 3 } },
      onEvent: (event) => events.push(event),
    });
    const broken = report.servers[0]!;
    expect(broken.failure).toBeUndefined();
    const soak = broken.soak!;
    expect(soak.seconds).toBe(8);
    expect(soak.windowSeconds).toBe(3);
    // Two whole windows and the last 2 s (over half a window) as a shorter one.
    expect(soak.windows.map((w) => w.startSecond)).toEqual([0, 3, 6]);
    expect(soak.windows.at(-1)!.seconds).toBe(2);
    for (const window of soak.windows) {
      expect(window.requestsPerSecond).toBeGreaterThan(0);
      expect(window.latencyP99).toBeGreaterThan(0); // broken answers in hundreds of ms
      expect(window.heapUsed).toBeGreaterThan(1e6);
      expect(window.gcShare).toBeGreaterThanOrEqual(0);
      expect(window.gcShare).toBeLessThan(1);
    }
    // The summary stays honest: every second, every request.
    expect(broken.load!.perSecond).toHaveLength(8);
    expect(broken.load!.durationSeconds).toBe(8);
    expect(broken.load!.errors + broken.load!.timeouts + broken.load!.non2xx).toBe(0);
    const answered = broken.load!.perSecond.reduce((sum, n) => sum + n, 0);
    const fromWindows = soak.windows.reduce((sum, w) => sum + w.requestsPerSecond * w.seconds, 0);
    expect(fromWindows).toBeCloseTo(answered, 6);
    // The etag listeners pile up: the pace falls as the soak goes on.
    expect(soak.trends.requestsPerSecond.slopePerMinute).toBeLessThan(0);
    // A progress line as each window closes, with its figures.
    const notes = events.flatMap((e) => (e.type === 'load' && e.progress.note ? [e.progress.note] : []));
    expect(notes).toHaveLength(3);
    expect(notes[0]).toMatch(/^window 1\/3 \(0-3 s\): [\d,]+ req\/s, p99 [\d,]+ ms, heap [\d.]+ MB/);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(liveServerCount()).toBe(0);
  });

});
