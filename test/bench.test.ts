import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { Expectations, fetchResponse } from '../scripts/check.ts';
import type { Exercise } from '../scripts/exercises.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { fixture } from './helpers.ts';
import { sampleManifest } from './sample.ts';

/** An exercise made of fixture servers, with a short load, to run the whole pipeline quickly. */
function fixtureExercise(files: { mine: string; broken?: string }): Exercise {
  const manifest = sampleManifest({
    load: { path: '/', connections: 2, warmupSeconds: 1.5, durationSeconds: 1 },
    check: async (baseUrl) => {
      const expect = new Expectations();
      const response = await fetchResponse(baseUrl);
      expect.expect(response.text === 'ok', 'answers ok', `got ${JSON.stringify(response.text)}`);
      return expect.result();
    },
  });
  return {
    manifest,
    dir: '',
    solutionsDir: '',
    serverFile: fixture(files.mine),
    shippedFile: fixture(files.broken ?? 'answers.ts'),
    ceilingFile: fixture('answers.ts'),
    stageFile: () => fixture('answers.ts'),
  };
}

describe('bench', () => {
  it('probes, loads and judges each server, with the probe figures of the measured phase', async () => {
    const exercise = fixtureExercise({ mine: 'answers.ts' });
    const report = await runBench(exercise, [specFor(exercise, 'broken'), specFor(exercise, 'mine')]);
    const [broken, mine] = report.servers;
    expect(broken!.load!.requests).toBeGreaterThan(0);
    expect(mine!.check!.ok).toBe(true);
    expect(mine!.runtime!.wallMs).toBeLessThan(2_000); // reset after the 1.5 s warm-up: about the measured second
    expect(mine!.runtime!.heapUsed).toBeGreaterThan(0);
    // One figure per measured second, without the empty tick autocannon sends as it ends.
    expect(mine!.load!.perSecond).toHaveLength(1);
    expect(mine!.load!.perSecond[0]).toBeGreaterThan(0);
    // Same server twice: about 1x, far from the 10x goal, so an honest FAIL with no other problem.
    const verdict = report.verdicts.find((v) => v.label === 'mine')!;
    expect(verdict.problems).toEqual([]);
    expect(verdict.targets[0]!.ratio).toBeGreaterThan(0.3);
    expect(verdict.targets[0]!.ratio).toBeLessThan(3);
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
