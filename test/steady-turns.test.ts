import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { exitCodeOf } from '../scripts/cli.ts';
import { AnswerSampler } from '../scripts/answers.ts';
import { AnswerTimeline } from '../scripts/answer-timeline.ts';
import { validateManifest } from '../scripts/manifest.ts';
import { liveServerCount, startServer } from '../scripts/server-process.ts';
import { combineTurns, loadInTurns } from '../scripts/steady-turns.ts';
import { judge, stillTooClose, verdictsPass, verdictsTooClose } from '../scripts/verdict.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { fixture } from './helpers.ts';
import { fixtureExercise, loadResult, sampleManifest, serverRun } from './sample.ts';

/** A run's turns with these req/s, one a round. */
function turnsOf(rates: number[]) {
  return rates.map((rate, round) => ({ round, load: loadResult(rate) }));
}

function runWithTurns(label: string, role: 'broken' | 'mine' | 'stage' | 'ceiling', rates: number[]) {
  const turns = turnsOf(rates);
  return serverRun(label, role, undefined, { turns, load: combineTurns(turns, 0) });
}

describe('servers in turns', () => {
  it('judges the median of the per-round ratios, and passes only when the interval clears the target', () => {
    const manifest = sampleManifest({ goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }] });
    const broken = runWithTurns('broken', 'broken', [100, 50, 100, 80, 100]);
    // Each round twice the broken server's, whatever the machine did in that round: a pass.
    const steady = runWithTurns('mine', 'mine', [200, 100, 200, 160, 200]);
    const [verdict] = judge(manifest, [broken, steady]);
    expect(verdict!.targets[0]!.rounds!.ratios).toEqual([2, 2, 2, 2, 2]);
    expect(verdict!.pass).toBe(true);
    // The same mean speed measured in other rounds: the interval straddles 2, so too close to call.
    const shaky = runWithTurns('mine', 'mine', [300, 80, 150, 200, 200]);
    const [close] = judge(manifest, [broken, shaky]);
    expect(close!.targets[0]!.tooClose).toBe(true);
    expect(close!.tooClose).toBe(true);
    expect(stillTooClose(manifest, [broken, shaky])).toEqual(['mine: req/s vs broken']);
    expect(verdictsTooClose([close!])).toBe(true);
    expect(verdictsPass([close!])).toBe(false);
    // Every round short of the target: a clear fail, not a close one.
    const slow = runWithTurns('mine', 'mine', [110, 60, 100, 90, 120]);
    const [fail] = judge(manifest, [broken, slow]);
    expect(fail!.tooClose).toBeUndefined();
    expect(fail!.pass).toBe(false);
    expect(stillTooClose(manifest, [broken, slow])).toEqual([]);
    // Too close on one target but clearly short on another: already a FAIL, no more rounds needed.
    const two = sampleManifest({
      goal: [
        { metric: requestsPerSecond, against: 'broken', atLeast: 2 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 4 },
      ],
    });
    const [halfway] = judge(two, [broken, shaky]);
    expect(halfway!.targets.map((t) => (t.tooClose ? 'too close' : t.pass ? 'pass' : 'fail'))).toEqual(['too close', 'fail']);
    expect(halfway!.tooClose).toBeUndefined();
    expect(stillTooClose(two, [broken, shaky])).toEqual([]);
  });

  it('asks for no more rounds for a target whose server or reference takes no more turns', () => {
    const manifest = sampleManifest({ goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }] });
    const broken = runWithTurns('broken', 'broken', [100, 50, 100, 80, 100]);
    const shaky = runWithTurns('mine', 'mine', [300, 80, 150, 200, 200]);
    expect(stillTooClose(manifest, [broken, shaky], (label) => label === 'broken')).toEqual([]);
    expect(stillTooClose(manifest, [broken, shaky], (label) => label === 'mine')).toEqual([]);
    expect(stillTooClose(manifest, [broken, shaky], () => false)).toEqual(['mine: req/s vs broken']);
  });

  it('takes more rounds for a close target of a stage that is wrong on purpose: its targets are held too', () => {
    const wrongOnPurpose = sampleManifest({
      stages: [
        {
          file: '1-fast-but-wrong.ts',
          title: 'fast but wrong',
          changes: 'caches what it must not',
          targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 2 }],
          expectedToFail: { why: 'it serves stale data', problem: 'stale' },
        },
      ],
    });
    const broken = runWithTurns('broken', 'broken', [100, 50, 100, 80, 100]);
    const shaky = runWithTurns('stage 1', 'stage', [300, 80, 150, 200, 200]);
    const [verdict] = judge(wrongOnPurpose, [broken, shaky]);
    expect(verdict!.expectedToFail).toBeDefined();
    expect(verdict!.targets[0]!.tooClose).toBe(true);
    expect(stillTooClose(wrongOnPurpose, [broken, shaky])).toEqual(['stage 1: req/s vs broken']);
    // Clear of its target: no more rounds; and once rejected for a problem, none either.
    expect(stillTooClose(wrongOnPurpose, [broken, runWithTurns('stage 1', 'stage', [200, 100, 200, 160, 200])])).toEqual([]);
    const rejected = runWithTurns('stage 1', 'stage', [300, 80, 150, 200, 200]);
    rejected.failure = 'it crashed';
    expect(stillTooClose(wrongOnPurpose, [broken, rejected])).toEqual([]);
  });

  it('stops the shipped server after brokenRounds while the others go on', async () => {
    const load = { path: '/', connections: 2, warmupSeconds: 0.5, durationSeconds: 1, turns: { seconds: 0.5, minRounds: 3, maxRounds: 5, brokenRounds: 3 } };
    const servers = await Promise.all([startServer(fixture('answers.ts')), startServer(fixture('answers.ts'))]);
    try {
      const contenders = [serverRun('broken', 'broken', undefined), serverRun('mine', 'mine', undefined)].map((run, i) => ({ run, server: servers[i]!, sampler: new AnswerSampler(), timeline: new AnswerTimeline() }));
      const asked: string[] = [];
      const measuredBetweenRounds: boolean[] = [];
      const rounds = await loadInTurns(contenders, load, {
        // Never decided: the turns run to the most allowed.
        decided: (done) => {
          asked.push(`${done('broken') ? 'broken done' : 'broken on'}, ${done('mine') ? 'mine done' : 'mine on'}`);
          // What a judgement between rounds reads: each server's processes over its turns so far.
          measuredBetweenRounds.push(contenders.every(({ run }) => (run.processes?.[0]?.cores ?? 0) > 0));
          return false;
        },
        onProgress: () => {},
        onCrash: () => {},
      });
      expect(rounds).toBe(5);
      expect(contenders[0]!.run.turns!.map((t) => t.round)).toEqual([0, 1, 2]);
      expect(contenders[1]!.run.turns!.map((t) => t.round)).toEqual([0, 1, 2, 3, 4]);
      expect(asked).toEqual(['broken done, mine on', 'broken done, mine on', 'broken done, mine done']);
      expect(measuredBetweenRounds).toEqual([true, true, true]);
      // Each server's processes over its own turns: here one process each, which did the answering.
      for (const [i, { run }] of contenders.entries()) {
        expect(run.processes?.map((p) => [p.pid, p.role])).toEqual([[servers[i]!.pid, 'main']]);
        expect(run.processes![0]!.cores).toBeGreaterThan(0);
        expect(run.processes![0]!.utilization).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
    expect(validateManifest(sampleManifest({ load: { ...load, turns: { ...load.turns, brokenRounds: 6 } } }))).toContain(
      'load.turns.brokenRounds must be a whole number from minRounds to maxRounds',
    );
  });

  it('gives exit code 3 for too close to call, 1 for a fail, 0 for a pass', () => {
    const report = { pass: false, tooClose: true } as Parameters<typeof exitCodeOf>[0];
    expect(exitCodeOf(report)).toBe(3);
    expect(exitCodeOf({ ...report, tooClose: undefined })).toBe(1);
    expect(exitCodeOf({ ...report, pass: true })).toBe(0);
  });

  it('does not judge a target that needs more cores than the server has, and says why', () => {
    const manifest = sampleManifest({
      goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 1.4, needsCores: { count: 64, why: 'workers share the cores' } }],
    });
    const [verdict] = judge(manifest, [runWithTurns('broken', 'broken', [100, 100, 100]), runWithTurns('mine', 'mine', [300, 300, 300])]);
    expect(verdict!.pass).toBe(false);
    expect(verdict!.cannotJudge).toMatch(/this target needs 64: workers share the cores/);
    expect(verdictsTooClose([verdict!])).toBe(true);
  });

  it('rejects a server that answers the probe right and the load wrong, with the count', async () => {
    const exercise = fixtureExercise({ mine: 'ok-then-other.ts' });
    const report = await runBench(exercise, [specFor(exercise, 'broken'), specFor(exercise, 'mine')]);
    const mine = report.verdicts.find((v) => v.label === 'mine')!;
    expect(report.servers.find((s) => s.label === 'mine')!.check!.ok).toBe(true);
    expect(mine.problems.join('\n')).toMatch(/^under load: \d+ of \d+ sampled answers: answered 200 "other", not 200 "ok"/m);
    expect(mine.problems.join('\n')).toMatch(/^the correctness probe after the load: answers ok: got "other"/m);
    expect(report.pass).toBe(false);
    expect(liveServerCount()).toBe(0);
  });
});
