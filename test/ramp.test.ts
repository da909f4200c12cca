import { describe, expect, it } from 'vitest';
import { resolveRamp, runBench, specFor } from '../scripts/bench.ts';
import { findKnee, latencyFigures, stepRates } from '../scripts/ramp.ts';
import type { RampStep } from '../scripts/result.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { judge } from '../scripts/verdict.ts';
import { fixture } from './helpers.ts';
import { sampleManifest } from './sample.ts';

/** A step with a p99 of `p99` ms that answered `achieved` of `offered` req/s. */
const step = (offered: number, achieved: number, p99: number): RampStep => ({
  offered,
  achieved,
  latency: { p50: p99 / 2, p90: p99, p99, max: p99, mean: p99 / 2 },
  errors: 0,
  timeouts: 0,
  non2xx: 0,
  seconds: 2,
});

describe('ramp', () => {
  it('spaces the offered rates evenly from the first to the last, in whole req/s', () => {
    expect(stepRates({ from: 10, to: 100, steps: 4, stepSeconds: 2 })).toEqual([10, 40, 70, 100]);
    expect(stepRates({ from: 1, to: 40, steps: 2, stepSeconds: 2 })).toEqual([1, 40]);
  });

  it('puts the knee at the last step kept up before the answers stop following the offered rate', () => {
    const knee = findKnee([step(20, 20, 10), step(40, 40, 11), step(60, 59, 14), step(80, 65, 900), step(100, 66, 1800)]);
    expect(knee).toMatchObject({ offered: 60, achieved: 59, step: 2 });
    expect(knee!.reason).toBe('at 80 req/s it answered 65 of 80 req/s offered');
  });

  it('also finds it where the p99 passes 10x its low-load value, throughput still following', () => {
    const knee = findKnee([step(20, 20, 10), step(40, 40, 30), step(60, 60, 120), step(80, 80, 400)]);
    expect(knee).toMatchObject({ offered: 40, step: 1 });
    expect(knee!.reason).toContain('p99 120 ms, over 10x its low-load 10 ms');
  });

  it('takes one step behind followed by a step that keeps up as a pause, not the knee', () => {
    const knee = findKnee([step(20, 20, 10), step(40, 40, 250), step(60, 60, 12), step(80, 60, 900), step(100, 61, 1900)]);
    expect(knee).toMatchObject({ offered: 60, step: 2 });
  });

  it('counts a last step behind as past the knee', () => {
    expect(findKnee([step(20, 20, 10), step(40, 40, 10), step(60, 40, 500)])).toMatchObject({ offered: 40 });
  });

  it('has no knee when every step kept up, or when the first step was already behind', () => {
    expect(findKnee([step(20, 20, 10), step(40, 40, 12)])).toBeUndefined();
    expect(findKnee([step(20, 5, 10), step(40, 6, 12)])).toBeUndefined();
  });

  it('does not read a 1 ms p99 turning into 11 ms as a cliff (a floor of 2 ms under the low-load p99)', () => {
    expect(findKnee([step(100, 100, 1), step(200, 200, 11), step(300, 300, 15)])).toBeUndefined();
  });

  it('takes exact percentiles of the latencies it was given', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(latencyFigures(values)).toEqual({ p50: 50, p90: 90, p99: 99, max: 100, mean: 50.5 });
    expect(latencyFigures([])).toEqual({ p50: 0, p90: 0, p99: 0, max: 0, mean: 0 });
  });

  it("fills what run --ramp leaves out from the exercise's ramp, or from the rate its warm-up reached", () => {
    const own = { from: 10, to: 300, steps: 12, stepSeconds: 2 };
    expect(resolveRamp({}, own)).toEqual(own);
    expect(resolveRamp({ to: 500, seconds: 40 }, own)).toEqual({ from: 10, to: 500, steps: 20, stepSeconds: 2 });
    expect(resolveRamp({}, undefined, 1000)).toEqual({ from: 100, to: 2000, steps: 10, stepSeconds: 2 });
    expect(resolveRamp({ from: 5 }, undefined, 0)).toEqual({ from: 5, to: 20, steps: 10, stepSeconds: 2 });
  });

  it('ramps a real server that can do ~100 req/s and finds its knee there, with the cliff past it', async () => {
    const manifest = sampleManifest({
      load: { path: '/', connections: 60, warmupSeconds: 1, durationSeconds: 1, ramp: { from: 20, to: 180, steps: 5, stepSeconds: 2 } },
      symptom: [{ metric: 'latencyCliff', against: 'itself', atLeast: 10 }],
    });
    const exercise = { manifest, dir: '', solutionsDir: '', serverFile: fixture('busy-10ms.ts'), shippedFile: fixture('busy-10ms.ts'), stageFile: () => fixture('busy-10ms.ts') };
    const report = await runBench(exercise, [specFor(exercise, 'broken')], { judge: false });
    const ramp = report.servers[0]!.ramp!;
    console.log(ramp.steps.map((s) => `${s.offered} -> ${s.achieved.toFixed(0)} req/s, p99 ${s.latency.p99} ms`).join('\n'));
    expect(ramp.steps[0]).toMatchObject({ offered: 20 });
    expect(ramp.steps[0]!.achieved).toBeCloseTo(20, -1);
    // 20, 60 and 100 req/s offered; it cannot answer 140. The knee is at 60 or, on a quick machine, 100.
    expect([60, 100]).toContain(ramp.knee?.offered);
    expect(ramp.cliff).toBeGreaterThan(10);
    // The symptom is judged on the broken server, from the same figures.
    const [symptom] = judge(manifest, report.servers);
    expect(symptom).toMatchObject({ label: 'broken', symptom: true, pass: true });
    expect(liveServerCount()).toBe(0);
  }, 60_000);
});
