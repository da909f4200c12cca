import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { crossing, findKnee, latencyFigures, lowLoadOf, resolveRamp, stepRates } from '../scripts/ramp.ts';
import type { RampStep } from '../scripts/result.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { judge } from '../scripts/verdict.ts';
import { latencyCliff } from '../scripts/metrics/latency-cliff.ts';
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
/** The same, measured in the settle (placing the knee, side by side with the other servers). */
const settled = (offered: number, achieved: number, p99: number): RampStep => ({ ...step(offered, achieved, p99), settle: true });

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

  it('takes a rate behind on its first try and kept up on its second as kept up', () => {
    const knee = findKnee([step(20, 20, 10), step(40, 40, 12), step(60, 50, 900), step(60, 60, 14), step(80, 62, 900), step(80, 63, 950)]);
    expect(knee).toMatchObject({ offered: 60, step: 3 });
    expect(knee!.reason).toBe('at 80 req/s it answered 63 of 80 req/s offered (2 tries)');
  });

  it('takes the knee from the settle when there is one, whatever the climb saw at the same rates', () => {
    // The climb kept up at 120; placing the knee a few seconds later, alongside the other servers, it did not.
    const climb = [step(30, 30, 20), step(75, 75, 40), step(120, 120, 50), step(165, 140, 1500), step(210, 140, 1600)];
    const settle = [settled(135, 120, 1400), settled(135, 121, 1300), settled(120, 112, 1500), settled(120, 119, 60)];
    const knee = findKnee([...climb, ...settle].sort((a, b) => a.offered - b.offered));
    expect(knee).toMatchObject({ offered: 120, achieved: 119 });
    expect(knee!.reason).toContain('at 135 req/s it answered 121 of 135 req/s offered (2 tries)');
    // Going up: the highest rate kept before one behind twice.
    const up = findKnee([...climb, settled(135, 135, 60), settled(150, 150, 90), settled(165, 150, 900), settled(165, 151, 850)]);
    expect(up).toMatchObject({ offered: 150 });
  });

  it('falls back to the climb when the settle places no knee', () => {
    const climb = [step(30, 30, 20), step(75, 75, 40), step(120, 120, 50), step(165, 140, 1500), step(210, 140, 1600)];
    const knee = findKnee([...climb, settled(135, 100, 1800), settled(135, 99, 1900)]);
    expect(knee).toMatchObject({ offered: 120 });
  });

  it('places the knee between the step kept up and the next one behind: p99 on a log scale, the answered share on a line', () => {
    // p99 50 ms -> 5,000 ms over 15 req/s, limit 500 ms (10x a low-load 50 ms): halfway on a log scale.
    expect(crossing(step(120, 120, 50), step(135, 135, 5000), 50)).toBeCloseTo(127.5, 5);
    // Answered share 100% -> 80%: 90% is crossed halfway.
    expect(crossing(step(120, 120, 50), step(140, 112, 100), 50)).toBeCloseTo(130, 5);
    // Both: the earlier crossing (p99 50 -> 50,000 ms crosses 500 ms a third of the way).
    expect(crossing(step(120, 120, 50), step(140, 112, 50_000), 50)).toBeCloseTo(126.67, 2);
    expect(crossing(step(120, 120, 50), step(140, 130, 5000), 50)).toBeCloseTo(130, 5);
    // findKnee's rate takes the best of the tries behind.
    const knee = findKnee([step(30, 30, 50), step(120, 120, 50), step(135, 135, 5000), step(135, 135, 1581.1)]);
    expect(knee!.rate).toBe(130);
  });

  it('takes the low-load p99 from the step at the lowest rate (the lowest of several)', () => {
    expect(lowLoadOf([step(60, 60, 30), step(30, 30, 25), step(30, 30, 18)])).toBe(18);
    expect(lowLoadOf([])).toBe(0);
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
      load: { path: '/', connections: 60, warmupSeconds: 1, durationSeconds: 1, ramp: { from: 20, to: 180, steps: 5, stepSeconds: 1 } },
      symptom: [{ metric: latencyCliff, against: 'itself', atLeast: 10 }],
    });
    const exercise = { manifest, dir: '', solutionsDir: '', serverFile: fixture('busy-10ms.ts'), shippedFile: fixture('busy-10ms.ts'), stageFile: () => fixture('busy-10ms.ts') };
    const report = await runBench(exercise, [specFor(exercise, 'broken')], { judge: false });
    const ramp = report.servers[0]!.ramp!;
    console.log(ramp.steps.map((s) => `${s.offered} -> ${s.achieved.toFixed(0)} req/s, p99 ${s.latency.p99} ms${s.settle ? ' (settle)' : ''}`).join('\n'));
    console.log(`knee ${ramp.knee?.rate} req/s (${ramp.knee?.reason})`);
    expect(ramp.steps[0]).toMatchObject({ offered: 20 });
    expect(ramp.steps[0]!.achieved).toBeCloseTo(20, -1);
    // It cannot answer 140: the climb stops there, and the settle places the knee between 60 and 140.
    expect(ramp.steps.some((s) => s.settle)).toBe(true);
    expect(ramp.knee?.rate).toBeGreaterThanOrEqual(60);
    expect(ramp.knee?.rate).toBeLessThan(140);
    expect(ramp.cliff).toBeGreaterThan(10);
    // The symptom is judged on the broken server, from the same figures.
    const [symptom] = judge(manifest, report.servers);
    expect(symptom).toMatchObject({ label: 'broken', symptom: true, pass: true });
    expect(liveServerCount()).toBe(0);
  }, 60_000);
});
