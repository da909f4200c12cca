import { describe, expect, it } from 'vitest';
import { findReference, honestyProblems, judge, judgeTarget } from '../scripts/verdict.ts';
import { loadResult, sampleManifest, serverRun } from './sample.ts';

const runs = () => [
  serverRun('broken', 'broken', 100),
  serverRun('stage 1', 'stage', 2_000),
  serverRun('stage 2', 'stage', 3_500),
  serverRun('ceiling', 'ceiling', 4_000),
];

describe('verdict', () => {
  it('takes ratios against references measured in the same run', () => {
    const [broken, stage1, stage2, ceiling] = runs();
    const all = [broken!, stage1!, stage2!, ceiling!];
    expect(findReference(all, stage1!, 'previous')).toBe(broken);
    expect(findReference(all, stage2!, 'previous')).toBe(stage1);
    expect(findReference(all, stage2!, 'ceiling')).toBe(ceiling);

    const result = judgeTarget(all, stage1!, { metric: 'requestsPerSecond', against: 'broken', atLeast: 10 });
    expect(result.ratio).toBe(20);
    expect(result.pass).toBe(true);
    expect(result.margin).toBeCloseTo(1); // 20x against 10x needed: 100% past the line
    expect(result.requiredValue).toBe(1_000); // 10 x 100 req/s measured now
  });

  it('fails a target that is missed, with a negative margin', () => {
    const all = runs();
    const result = judgeTarget(all, all[2]!, { metric: 'requestsPerSecond', against: 'previous', atLeast: 2 });
    expect(result.ratio).toBe(1.75);
    expect(result.pass).toBe(false);
    expect(result.margin).toBeCloseTo(-0.125);
    expect(result.requiredValue).toBe(4_000);
  });

  it('handles at-most targets (latency) with a margin that grows as the value shrinks', () => {
    const broken = serverRun('broken', 'broken', 100, { load: loadResult(100, { latency: { p50: 50, p90: 90, p99: 200, max: 300, mean: 60 } }) });
    const stage = serverRun('stage 1', 'stage', 2_000);
    const result = judgeTarget([broken, stage], stage, { metric: 'latencyP99', against: 'broken', atMost: 0.1 });
    expect(result.ratio).toBeCloseTo(0.015);
    expect(result.pass).toBe(true);
    expect(result.margin).toBeGreaterThan(5);
  });

  it('cannot judge without the reference, and says why', () => {
    const stage = serverRun('stage 1', 'stage', 2_000);
    const result = judgeTarget([stage], stage, { metric: 'requestsPerSecond', against: 'broken', atLeast: 10 });
    expect(result.pass).toBe(false);
    expect(result.note).toMatch(/no broken server was measured/);
    const zero = serverRun('broken', 'broken', 0);
    expect(judgeTarget([zero, stage], stage, { metric: 'requestsPerSecond', against: 'broken', atLeast: 10 }).note).toMatch(/no ratio/);
  });

  it('fails a fast server with errors, timeouts, non-2xx or wrong answers', () => {
    const fast = (changes: Parameters<typeof loadResult>[1]) => serverRun('stage 1', 'stage', 50_000, { load: loadResult(50_000, changes) });
    expect(honestyProblems(fast({ errors: 3 }))).toEqual(['3 request errors under load']);
    expect(honestyProblems(fast({ timeouts: 2 }))).toEqual(['2 requests timed out under load']);
    expect(honestyProblems(fast({ non2xx: 7 }))).toEqual(['7 answers were not 2xx']);
    const wrong = serverRun('stage 1', 'stage', 50_000, { check: { ok: false, passed: [], failures: ['no ETag'] } });
    expect(honestyProblems(wrong)).toEqual(['correctness: no ETag']);

    const verdicts = judge(sampleManifest(), [serverRun('broken', 'broken', 100), fast({ non2xx: 1 })]);
    expect(verdicts[0]!.targets[0]!.pass).toBe(true);
    expect(verdicts[0]!.pass).toBe(false);
  });

  it('judges every stage and the trainee file, and only them', () => {
    const all = [...runs(), serverRun('mine', 'mine', 150)];
    const verdicts = judge(sampleManifest(), all);
    expect(verdicts.map((v) => [v.label, v.pass])).toEqual([
      ['stage 1', true],
      ['stage 2', true],
      ['mine', false],
    ]);
    expect(verdicts[1]!.targets.map((t) => t.ratio)).toEqual([1.75, 0.875]);
  });
});
