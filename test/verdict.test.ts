import { describe, expect, it } from 'vitest';
import { closingAdvice } from '../scripts/commands/verify.ts';
import type { RunReport } from '../scripts/result.ts';
import { findReference, honestyProblems, judge, judgeTarget, stretchStage } from '../scripts/verdict.ts';
import { keptOf } from '../scripts/fresh-copy.ts';
import { judgeBeforeListening } from '../scripts/before-listening.ts';
import { judgeBetweenTurns, REST_CORES } from '../scripts/between-turns.ts';
import { judgeOthersInTurns, OTHERS_GAP_CORES } from '../scripts/others-during-turns.ts';
import { cpuPerAnswer } from '../scripts/metrics/cpu-per-answer.ts';
import { lateRequestsPerSecond } from '../scripts/metrics/late-requests-per-second.ts';
import { latencyP99 } from '../scripts/metrics/latency-p99.ts';
import { minorGcPerRequest } from '../scripts/metrics/minor-gc-per-request.ts';
import { pendingLookups } from '../scripts/metrics/pending-lookups.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { throughputKept } from '../scripts/metrics/throughput-kept.ts';
import { loadResult, runtimeFigures, sampleManifest, serverRun } from './sample.ts';

const runs = () => [
  serverRun('broken', 'broken', 100),
  serverRun('stage 1', 'stage', 2_000),
  serverRun('stage 2', 'stage', 3_500),
  serverRun('ceiling', 'ceiling', 4_000),
];

describe('verdict', () => {
  it("fails a judged server that works while the others take their turns, against the shipped server's own work then", () => {
    const [broken, stage1, stage2, ceiling] = runs();
    const all = [broken!, stage1!, stage2!, ceiling!];
    broken!.betweenTurns = { cores: 0.02, seconds: 20 };
    stage1!.betweenTurns = { cores: 0.05, seconds: 20 };
    stage2!.betweenTurns = { cores: 0.6, seconds: 20 };
    ceiling!.betweenTurns = { cores: 0.6, seconds: 20 };
    judgeBetweenTurns(all, (run) => run.role === 'stage');
    expect(stage1!.betweenTurns!.atMost).toBe(REST_CORES);
    expect(honestyProblems(stage1!)).toEqual([]);
    expect(honestyProblems(stage2!).join('\n')).toMatch(/^between its turns: its processes used 0\.60 cores while the other servers took theirs \(over 20 s; at most 0\.25\)/);
    // A reference is not judged on it.
    expect(ceiling!.betweenTurns!.atMost).toBeUndefined();
    expect(honestyProblems(ceiling!)).toEqual([]);
    // A shipped server with work of its own between turns: twice its figure.
    broken!.betweenTurns = { cores: 0.4, seconds: 20 };
    judgeBetweenTurns(all, (run) => run.role === 'stage');
    expect(stage2!.betweenTurns!.atMost).toBeCloseTo(0.8);
    expect(honestyProblems(stage2!)).toEqual([]);
  });

  it('fails a server whose process without the probe did work under load; an idle one is no matter', () => {
    const [, stage1] = runs();
    stage1!.processes = [
      { pid: 10, role: 'main', cores: 0.2 },
      { pid: 11, role: 'other', cores: 1.21 },
      { pid: 12, role: 'other', cores: 0.02 },
    ];
    expect(honestyProblems(stage1!).join('\n')).toMatch(/^processes the probe could not see: pid 11 used 1\.21 cores under load, started without the probe's preloads/);
    stage1!.processes = [{ pid: 10, role: 'main', cores: 0.9 }, { pid: 11, role: 'worker', cores: 0.9 }, { pid: 12, role: 'other', cores: 0.1 }];
    expect(honestyProblems(stage1!)).toEqual([]);
  });

  it("fails a judged server that worked before it listened, per isolate, against the shipped server's start", () => {
    const [broken, stage1, stage2, ceiling] = runs();
    const all = [broken!, stage1!, stage2!, ceiling!];
    broken!.beforeListening = { cpuSeconds: 0.8, isolates: 1 };
    stage1!.beforeListening = { cpuSeconds: 2.6, isolates: 1 };
    // A cluster of eight: eight starts, each about the shipped server's.
    stage2!.beforeListening = { cpuSeconds: 7.5, isolates: 9 };
    ceiling!.beforeListening = { cpuSeconds: 20, isolates: 1 };
    judgeBeforeListening(all, (run) => run.role === 'stage');
    expect(stage1!.beforeListening!.atMost).toBeCloseTo(2.9);
    expect(honestyProblems(stage1!)).toEqual([]);
    expect(stage2!.beforeListening!.atMost).toBeCloseTo(9 * 2.9);
    expect(honestyProblems(stage2!)).toEqual([]);
    expect(ceiling!.beforeListening!.atMost).toBeUndefined();
    stage1!.beforeListening = { cpuSeconds: 8.1, isolates: 2 };
    judgeBeforeListening(all, (run) => run.role === 'stage');
    expect(honestyProblems(stage1!).join('\n')).toMatch(/^before it listened: its processes used 8\.1 s of CPU \(2 isolates; at most 5\.8 s, from the shipped server's\)/);
    // Without the shipped server in the run, nothing to hold it to.
    stage1!.beforeListening = { cpuSeconds: 8.1, isolates: 2 };
    judgeBeforeListening([stage1!, ceiling!], (run) => run.role === 'stage');
    expect(stage1!.beforeListening!.atMost).toBeUndefined();
  });

  it("fails a judged server whose turns were quieter than another server's: other programs ran while only that one was loaded", () => {
    const [broken, stage1, , ceiling] = runs();
    const all = [broken!, stage1!, ceiling!];
    const turns = (cores: number[]) => cores.map((othersCores, round) => ({ round, load: loadResult(100), othersCores }));
    // Noise that comes and goes hits every server's turns alike: the medians stay close.
    broken!.turns = turns([0.9, 0.0, 0.1, 0.05]);
    stage1!.turns = turns([0.0, 0.8, 0.1, 0.02]);
    ceiling!.turns = turns([0.1, 0.1, 1.2, 0.0]);
    judgeOthersInTurns(all, (run) => run.role === 'stage');
    expect(stage1!.othersInTurns!.cores).toBeCloseTo(0.06);
    expect(stage1!.othersInTurns!.other).toBeCloseTo(0.1);
    expect(honestyProblems(stage1!)).toEqual([]);
    // A program that runs during the shipped server's turns only.
    broken!.turns = turns([1.6, 1.5, 1.7, 1.4]);
    judgeOthersInTurns(all, (run) => run.role === 'stage');
    expect(1.55 - 0.06).toBeGreaterThan(OTHERS_GAP_CORES);
    expect(honestyProblems(stage1!).join('\n')).toMatch(
      /^during its turns: other programs on the machine used 0\.06 cores \(the median turn\), and 1\.55 during broken's: the turns were not alike/,
    );
    // A reference is not judged on it.
    expect(ceiling!.othersInTurns!.other).toBeUndefined();
    expect(honestyProblems(ceiling!)).toEqual([]);
    // And programs that run during its own turns only: cores lent to it.
    broken!.turns = turns([0.0, 0.1, 0.0, 0.05]);
    stage1!.turns = turns([1.2, 0.9, 1.1, 1.0]);
    judgeOthersInTurns(all, (run) => run.role === 'stage');
    expect(honestyProblems(stage1!).join('\n')).toMatch(/^during its turns: other programs on the machine used 1\.05 cores \(the median turn\), and 0\.03 during broken's/);
  });

  it('takes ratios against references measured in the same run', () => {
    const [broken, stage1, stage2, ceiling] = runs();
    const all = [broken!, stage1!, stage2!, ceiling!];
    expect(findReference(all, stage1!, 'previous')).toBe(broken);
    expect(findReference(all, stage2!, 'previous')).toBe(stage1);
    expect(findReference(all, stage2!, 'ceiling')).toBe(ceiling);

    const result = judgeTarget(all, stage1!, { metric: requestsPerSecond, against: 'broken', atLeast: 10 });
    expect(result.ratio).toBe(20);
    expect(result.pass).toBe(true);
    expect(result.margin).toBeCloseTo(1); // 20x against 10x needed: 100% past the line
    expect(result.requiredValue).toBe(1_000); // 10 x 100 req/s measured now
  });

  it('fails a target that is missed, with a negative margin', () => {
    const all = runs();
    const result = judgeTarget(all, all[2]!, { metric: requestsPerSecond, against: 'previous', atLeast: 2 });
    expect(result.ratio).toBe(1.75);
    expect(result.pass).toBe(false);
    expect(result.margin).toBeCloseTo(-0.125);
    expect(result.requiredValue).toBe(4_000);
  });

  it('handles at-most targets (latency) with a margin that grows as the value shrinks', () => {
    const broken = serverRun('broken', 'broken', 100, { load: loadResult(100, { latency: { p50: 50, p90: 90, p99: 200, max: 300, mean: 60 } }) });
    const stage = serverRun('stage 1', 'stage', 2_000);
    const result = judgeTarget([broken, stage], stage, { metric: latencyP99, against: 'broken', atMost: 0.1 });
    expect(result.ratio).toBeCloseTo(0.015);
    expect(result.pass).toBe(true);
    expect(result.margin).toBeGreaterThan(5);
  });

  it('takes scavenge time per request from the probe and the measured requests', () => {
    const gc = (ms: number) => runtimeFigures(2_000, ms, 10);
    // broken: 600 ms over 200 requests = 3 ms/req; the stage: 300 ms over 600 requests = 0.5 ms/req. A share
    // target would see 0.30 against 0.15 (0.5x); per request the churn fell to a sixth.
    const broken = serverRun('broken', 'broken', 100, { runtime: gc(600) });
    const stage = serverRun('stage 1', 'stage', 300, { runtime: gc(300) });
    const result = judgeTarget([broken, stage], stage, { metric: minorGcPerRequest, against: 'broken', atMost: 1 / 3 });
    expect(result.value).toBeCloseTo(0.5);
    expect(result.ratio).toBeCloseTo(1 / 6);
    expect(result.pass).toBe(true);
    const unmeasured = serverRun('stage 1', 'stage', 300);
    expect(judgeTarget([broken, unmeasured], unmeasured, { metric: minorGcPerRequest, against: 'broken', atMost: 1 / 3 }).note).toMatch(/no scavenge time per request figure/);
  });

  it('takes CPU time per answer from /proc and the answers, whatever holds the rate', () => {
    const cores = (...each: number[]) => each.map((c, i) => ({ pid: 100 + i, role: i === 0 ? ('main' as const) : ('worker' as const), cores: c }));
    // Stage 1: 1.2 cores at 20 req/s = 60 ms an answer. Stage 2, held by a wait: 0.3 cores (two processes) at
    // 100 req/s = 3 ms. Its req/s is 5x stage 1's, its work a twentieth.
    const stage1 = serverRun('stage 1', 'stage', 20, { processes: cores(1.2) });
    const stage2 = serverRun('stage 2', 'stage', 100, { processes: cores(0.2, 0.1) });
    const result = judgeTarget([stage1, stage2], stage2, { metric: cpuPerAnswer, against: 'previous', atMost: 0.25 });
    expect(result.referenceValue).toBeCloseTo(60);
    expect(result.value).toBeCloseTo(3);
    expect(result.ratio).toBeCloseTo(0.05);
    expect(result.pass).toBe(true);
    const slower = serverRun('stage 2', 'stage', 50, { processes: cores(1.0) }); // 20 ms an answer: a third of stage 1's
    expect(judgeTarget([stage1, slower], slower, { metric: cpuPerAnswer, against: 'previous', atMost: 0.25 }).pass).toBe(false);
    const unmeasured = serverRun('stage 2', 'stage', 100);
    expect(judgeTarget([stage1, unmeasured], unmeasured, { metric: cpuPerAnswer, against: 'previous', atMost: 0.25 }).note).toMatch(/no CPU time per answer figure/);
  });

  it('cannot judge without the reference, and says why', () => {
    const stage = serverRun('stage 1', 'stage', 2_000);
    const result = judgeTarget([stage], stage, { metric: requestsPerSecond, against: 'broken', atLeast: 10 });
    expect(result.pass).toBe(false);
    expect(result.note).toMatch(/no broken server was measured/);
    const zero = serverRun('broken', 'broken', 0);
    expect(judgeTarget([zero, stage], stage, { metric: requestsPerSecond, against: 'broken', atLeast: 10 }).note).toMatch(/no ratio/);
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

  it('holds a stretch to the last stage\'s targets: against the stage before it and the ceiling, the reference not judged', () => {
    const manifest = sampleManifest();
    expect(stretchStage(manifest)).toBe(2);
    // No stretch when the last stage is held to the goal itself, or there is one stage.
    expect(stretchStage(sampleManifest({ stages: manifest.stages.slice(0, 1) }))).toBeUndefined();
    expect(stretchStage(sampleManifest({ goal: manifest.stages[1]!.targets }))).toBeUndefined();
    const all = [serverRun('stage 1', 'stage', 4_000, { referenceOnly: true }), serverRun('ceiling', 'ceiling', 10_000), serverRun('mine', 'mine', 7_000, { stretch: 2 })];
    const verdicts = judge(manifest, all);
    expect(verdicts.map((v) => v.label)).toEqual(['mine']);
    expect(verdicts[0]!.targets.map((t) => [t.name, t.ratio, t.pass])).toEqual([
      ['req/s vs previous', 1.75, true],
      ['req/s vs ceiling', 0.7, false],
    ]);
  });

  it('judges what a server keeps against a fresh copy of itself, and its late pace against broken', () => {
    const over = (perSecond: number[]) => loadResult(perSecond.reduce((a, b) => a + b) / perSecond.length, { perSecond });
    const beside = (aged: number[], fresh: number[]) => ({ aged, fresh, kept: keptOf(aged, fresh) });
    // Eight seconds: quarters of two seconds. The broken one falls from 1,000 to 200 req/s, and then
    // answers a fifth of what its fresh copy does; the fixed one as much, one slow second aside.
    const broken = serverRun('broken', 'broken', undefined, { load: over([1000, 1000, 800, 600, 500, 400, 200, 200]), freshCopy: beside([190, 200, 210], [900, 1000, 1100]) });
    const fixed = serverRun('stage 1', 'stage', undefined, { load: over([1200, 1200, 1180, 1190, 1170, 1160, 1150, 1130]), freshCopy: beside([1140, 700, 1160], [1200, 1150, 1180]) });
    const kept = judgeTarget([broken, fixed], fixed, { metric: throughputKept, against: 'itself', atLeast: 0.9 });
    expect(kept.ratio).toBeCloseTo(1140 / 1200);
    expect(kept.pass).toBe(true);
    expect(judgeTarget([broken, fixed], broken, { metric: throughputKept, against: 'itself', atLeast: 0.9 }).ratio).toBeCloseTo(210 / 1000);
    // Without the fresh copy there is nothing to judge it by: not a pass.
    const alone = serverRun('stage 1', 'stage', undefined, { load: over([1200, 1200, 1180, 1190, 1170, 1160, 1150, 1130]) });
    const unjudged = judgeTarget([broken, alone], alone, { metric: throughputKept, against: 'itself', atLeast: 0.9 });
    expect(unjudged.pass).toBe(false);
    expect(unjudged.ratio).toBeUndefined();
    const late = judgeTarget([broken, fixed], fixed, { metric: lateRequestsPerSecond, against: 'broken', atLeast: 5 });
    expect(late.ratio).toBeCloseTo(1140 / 200);
    expect(late.pass).toBe(true);
  });

  it('takes the peak of pending lookups, c-ares and getaddrinfo, from the probe', () => {
    const runtime = runtimeFigures(2_000, 0, 0, { pendingPeak: { QUERYWRAP: 3_000, GETADDRINFOREQWRAP: 12, TCPWRAP: 30 } });
    const broken = serverRun('broken', 'broken', 100, { runtime });
    const fixed = serverRun('stage 1', 'stage', 1000, { runtime: runtimeFigures(2_000, 0, 0, { pendingPeak: { QUERYWRAP: 3 } }) });
    const result = judgeTarget([broken, fixed], fixed, { metric: pendingLookups, against: 'broken', atMost: 0.05 });
    expect(result.referenceValue).toBe(3_012);
    expect(result.pass).toBe(true);
    // Without the opt-in the probe does not count them, and the target says so rather than passing.
    const unmeasured = serverRun('stage 1', 'stage', 1000, { runtime: runtimeFigures(2_000, 0, 0) });
    expect(judgeTarget([broken, unmeasured], unmeasured, { metric: pendingLookups, against: 'broken', atMost: 0.05 }).pass).toBe(false);
  });

  it('shows a stage that is wrong on purpose as rejected when rejected for the named reason, never as passing', () => {
    const manifest = sampleManifest({
      ceilingFile: undefined,
      goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }],
      stages: [{
        file: '1-cache-forever.ts', title: 'cache forever', changes: 'caches', targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }],
        expectedToFail: { why: 'fast, but never sees a moved record', problem: 'metrics reach the new address' },
      }],
    });
    const rejectedRun = serverRun('stage 1', 'stage', 1000, { afterLoad: { ok: false, passed: [], failures: ['metrics reach the new address within 3 s: none arrived'] } });
    const [rejected] = judge(manifest, [serverRun('broken', 'broken', 100), rejectedRun]);
    expect(rejected!.pass).toBe(false);
    expect(rejected!.expectedToFail).toMatchObject({ rejected: true });
    expect(rejected!.targets[0]!.pass).toBe(true);
    const [accepted] = judge(manifest, [serverRun('broken', 'broken', 100), serverRun('stage 1', 'stage', 1000)]);
    expect(accepted!.pass).toBe(false);
    expect(accepted!.expectedToFail).toMatchObject({ rejected: false });
  });
});

describe("verify's closing line", () => {
  const floor = { metric: requestsPerSecond, against: 'broken' as const, atMost: 2, whenMissed: 'It skipped the work.' };
  const manifest = sampleManifest({ goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 10 }, floor] });
  const reportOf = (mine: ReturnType<typeof serverRun>): RunReport => {
    const servers = [serverRun('broken', 'broken', 100), mine];
    return { exercise: { id: '99-sample', title: 'Sample' }, node: process.version, startedAt: '', load: manifest.load, servers, verdicts: judge(manifest, servers), pass: false };
  };
  // The probe before the load: the trainee's file alone, not judged.
  const precheck = (changes: Partial<ReturnType<typeof serverRun>> = {}): RunReport => ({
    ...reportOf(serverRun('mine', 'mine', undefined)),
    servers: [serverRun('mine', 'mine', undefined, changes)],
    verdicts: [],
    pass: !changes.check && !changes.failure,
  });

  it('says why the file failed: a floor of the work missed, a target not reached yet, answers broken under load', () => {
    // 10,000 req/s: 100x, and 100x over the floor's 2x. Skipped work, whatever its speed.
    expect(closingAdvice(reportOf(serverRun('mine', 'mine', 10_000)), precheck())).toBe('It skipped the work.');
    // 1.5x: short of 10x, within the floor.
    expect(closingAdvice(reportOf(serverRun('mine', 'mine', 150)), precheck())).toBe('It answers correctly but has not reached the target yet.');
    const brokeUnderLoad = serverRun('mine', 'mine', 10_000, { answers: { sampled: 80, broken: 3, problems: [{ problem: 'status 500, not 200', count: 3, example: '500' }] } });
    expect(closingAdvice(reportOf(brokeUnderLoad), precheck())).toContain('but not what the load or the checks after it needed');
  });

  it('says the file answers wrong, or did not run, when the probe before the load failed', () => {
    const wrong = precheck({ check: { ok: false, passed: [], failures: ['GET / answers 200'] } });
    expect(closingAdvice(wrong, wrong)).toBe('It answers wrong: see the ✗ lines above.');
    const crashed = precheck({ failure: 'exited with code 1 before it listened' });
    expect(closingAdvice(crashed, crashed)).toBe('It did not run: see the reason and what it printed above.');
  });
});
