import { describe, expect, it } from 'vitest';
import { combineRuns, spread } from '../scripts/repeat.ts';
import { renderReport } from '../scripts/report.ts';
import type { RunReport } from '../scripts/result.ts';
import { judge } from '../scripts/verdict.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { loadResult, sampleManifest, serverRun } from './sample.ts';

const manifest = sampleManifest({
  ceilingFile: undefined,
  stages: [{ file: '1-fix.ts', title: 'fix', changes: 'fix', targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }] }],
});

/** One run: broken at `broken` req/s, stage 1 at `fixed`. */
function run(broken: number, fixed: number, changes: Parameters<typeof serverRun>[3] = {}): RunReport {
  const servers = [serverRun('broken', 'broken', broken), serverRun('stage 1', 'stage', fixed, changes)];
  const verdicts = judge(manifest, servers);
  return { exercise: { id: manifest.id, title: manifest.title }, node: 'v20', startedAt: `t${broken}`, load: manifest.load, servers, verdicts, pass: verdicts.every((v) => v.pass) };
}

describe('--runs N', () => {
  it('takes the median and the coefficient of variation', () => {
    const s = spread([100, 110, 90]);
    expect(s.median).toBe(100);
    expect(s.cv).toBeCloseTo(0.1, 5);
    expect(spread([5]).cv).toBe(0);
  });

  it('judges each target on the median ratio over the runs, and keeps each run’s ratio', () => {
    const combined = combineRuns([run(100, 300), run(100, 190), run(100, 250)]);
    const [verdict] = combined.verdicts;
    expect(verdict!.targets[0]!.spread!.values).toEqual([3, 1.9, 2.5]);
    expect(verdict!.targets[0]!.ratio).toBe(2.5);
    expect(verdict!.pass).toBe(true);
    expect(combined.pass).toBe(true);
    expect(combined.runs).toMatchObject({ count: 3, passedRuns: 2 });
    expect(combined.runs!.figures['stage 1']!.requestsPerSecond.median).toBe(250);
    expect(combined.startedAt).toBe('t100');
  });

  it('flags a verdict whose margin is within two run-to-run spreads as too noisy to call', () => {
    const noisy = combineRuns([run(100, 300), run(100, 190), run(100, 250)]).verdicts[0]!.targets[0]!;
    // median 2.5 against 2: margin +25%; ratios 3, 1.9, 2.5 spread ±22%.
    expect(noisy.margin).toBeCloseTo(0.25, 5);
    expect(noisy.noisy).toBe(true);
    const steady = combineRuns([run(100, 300), run(100, 310), run(100, 295)]).verdicts[0]!.targets[0]!;
    expect(steady.noisy).toBe(false);
    const text = renderReport(combineRuns([run(100, 300), run(100, 190), run(100, 250)]));
    expect(text).toContain('too noisy to call');
    expect(text).toMatch(/stage 1\s+250\s+±22%\s+300, 190, 250/);
    expect(text).toContain('passed in 2 of 3 runs on its own');
  });

  it('fails a verdict when any run had errors, however good the median', () => {
    const bad = run(100, 300, { load: loadResult(300, { errors: 4 }) });
    const combined = combineRuns([run(100, 300), bad, run(100, 310)]);
    expect(combined.verdicts[0]!.pass).toBe(false);
    expect(combined.verdicts[0]!.problems).toContain('run 2: 4 request errors under load');
    expect(combined.pass).toBe(false);
  });

  it('leaves a single run as it is', () => {
    const one = run(100, 300);
    expect(combineRuns([one])).toBe(one);
  });
});
