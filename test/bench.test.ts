import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { Expectations } from '../scripts/check.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { fixture } from './helpers.ts';
import { fixtureExercise } from './sample.ts';

describe('bench', () => {
  it('probes, loads in turns and judges each server, with the probe figures of its turns', async () => {
    const exercise = fixtureExercise({ mine: 'answers.ts' });
    const report = await runBench(exercise, [specFor(exercise, 'broken'), specFor(exercise, 'mine')]);
    const [broken, mine] = report.servers;
    expect(broken!.load!.requests).toBeGreaterThan(0);
    expect(mine!.check!.ok).toBe(true);
    // Far from the 10x goal: decided after the fewest rounds (4 turns of 1 s each).
    expect(report.turns).toEqual({ rounds: 4, seconds: 1, maxRounds: 11 });
    expect(mine!.turns).toHaveLength(4);
    // The probe's figures are reset at each turn: they add up to the turns, not the warm-ups.
    expect(mine!.runtime!.wallMs).toBeGreaterThan(3_500);
    expect(mine!.runtime!.wallMs).toBeLessThan(6_000);
    expect(mine!.runtime!.heapUsed).toBeGreaterThan(0);
    // One figure per turn.
    expect(mine!.load!.perSecond).toHaveLength(4);
    expect(mine!.load!.perSecond[0]).toBeGreaterThan(0);
    // What the load received was sampled and held to the contract, and the probe ran again after it.
    expect(mine!.answers!.sampled).toBeGreaterThan(50);
    expect(mine!.answers!.broken).toBe(0);
    expect(mine!.checkAfterLoad!.ok).toBe(true);
    // Same server twice: about 1x, far from the 10x goal, so an honest FAIL with no other problem.
    const verdict = report.verdicts.find((v) => v.label === 'mine')!;
    expect(verdict.problems).toEqual([]);
    expect(verdict.targets[0]!.ratio).toBeGreaterThan(0.3);
    expect(verdict.targets[0]!.ratio).toBeLessThan(3);
    expect(verdict.targets[0]!.rounds!.ratios).toHaveLength(4);
    expect(verdict.targets[0]!.rounds!.high).toBeLessThan(10);
    expect(report.pass).toBe(false);
    expect(liveServerCount()).toBe(0);
  });

  it('reports a server that dies on its first request as a crash, with what it printed', async () => {
    const exercise = fixtureExercise({ mine: 'crashes-on-request.ts' });
    const report = await runBench(exercise, [specFor(exercise, 'mine')], { checkOnly: true });
    const mine = report.servers[0]!;
    expect(mine.failure).toMatch(/crashed while it answered the correctness probe \(exit code 3\)/);
    expect(mine.output).toContain('handler failed');
    expect(report.pass).toBe(false);
  });

  it('reports a server that does not start, with what it printed, and runs the rest', async () => {
    const exercise = fixtureExercise({ mine: 'crashes-on-start.ts' });
    const report = await runBench(exercise, [specFor(exercise, 'mine'), specFor(exercise, 'broken')], { checkOnly: true });
    expect(report.servers[0]!.failure).toMatch(/exited \(exit code 1\) before it listened/);
    expect(report.servers[0]!.output).toContain('boom at start-up');
    expect(report.servers[1]!.check!.ok).toBe(true);
    expect(report.pass).toBe(false);
  });

  it('counts async resources when the manifest asks, and lets the after-load check stop the server gracefully', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-test-'));
    const stopFile = path.join(folder, 'stopped');
    const previous = process.env.STOP_FILE;
    process.env.STOP_FILE = stopFile; // the server inherits the harness's environment
    try {
      const exercise = fixtureExercise({ mine: 'graceful-with-lookups.ts' });
      let exit: { code: number | null; signal: string | null } | undefined;
      exercise.manifest.probe = { asyncResources: true };
      exercise.manifest.afterLoad = async ({ stopServer }) => {
        exit = await stopServer();
        const expect = new Expectations();
        expect.expect(readFileSync(stopFile, 'utf8') === 'flushed', 'flushed on SIGTERM');
        return expect.result();
      };
      const report = await runBench(exercise, [specFor(exercise, 'mine')]);
      const mine = report.servers[0]!;
      expect(mine.runtime!.pendingPeak!.QUERYWRAP).toBe(50);
      expect(mine.runtime!.activeResourcesPeak.TCPServerWrap).toBe(1);
      expect(mine.afterLoad).toMatchObject({ ok: true, passed: ['flushed on SIGTERM'] });
      expect(exit).toEqual({ code: 0, signal: null });
      expect(mine.failure).toBeUndefined(); // a stop the check asked for is no crash
      expect(mine.load!.perSecond.length).toBeGreaterThanOrEqual(1);
      expect(liveServerCount()).toBe(0);
    } finally {
      if (previous === undefined) delete process.env.STOP_FILE;
      else process.env.STOP_FILE = previous;
      rmSync(folder, { recursive: true, force: true });
    }
    expect(existsSync(stopFile)).toBe(false);
  });
});
