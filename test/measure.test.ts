// `workshop measure` on the sample service, as a team would run it: the service in a git repository with
// hot-path installed beside it, the baseline its HEAD. A slower change in the work tree fails with the
// figures, the change reverted passes; and the probe loads into the service by --import on its own.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/paths.ts';
import type { RunReport } from '../scripts/result.ts';
import { tempFolder } from './temp-folder.ts';

const SAMPLE = path.join(ROOT, 'examples', 'sample-service');
const repo = tempFolder('hotpath-measure-test-');

function git(...args: string[]): void {
  const result = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: repo(), encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

/** `npx workshop measure` on the copy's config: the report as JSON, and the exit code. */
function measure(): { code: number | null; report: RunReport; stderr: string } {
  // As docs/measure.md prints it: npx finds the command in node_modules/.bin (--no: never download one).
  const result = spawnSync('npx', ['--no', 'workshop', 'measure', 'measure.config.ts', '--json'], { cwd: repo(), encoding: 'utf8', timeout: 60_000 });
  if (!result.stdout.trim()) throw new Error(`workshop measure printed no report (exit code ${result.status}):\n${result.stderr}`);
  return { code: result.status, report: JSON.parse(result.stdout) as RunReport, stderr: result.stderr };
}

describe('workshop measure on the sample service', () => {
  let shipped = '';
  beforeAll(() => {
    for (const file of ['app.js', 'measure.config.ts']) copyFileSync(path.join(SAMPLE, file), path.join(repo(), file));
    writeFileSync(path.join(repo(), 'package.json'), JSON.stringify({ name: 'quotes', private: true, type: 'module' }));
    // hot-path installed beside the service, as `npm install --save-dev` would leave it.
    mkdirSync(path.join(repo(), 'node_modules', '.bin'), { recursive: true });
    symlinkSync(ROOT, path.join(repo(), 'node_modules', 'hot-path'));
    symlinkSync('../hot-path/bin/workshop.js', path.join(repo(), 'node_modules', '.bin', 'workshop'));
    writeFileSync(path.join(repo(), '.gitignore'), 'node_modules\n');
    git('init', '--quiet');
    git('add', '.');
    git('commit', '--quiet', '-m', 'the service');
    shipped = readFileSync(path.join(repo(), 'app.js'), 'utf8');
  });

  it('fails a slower change against HEAD with the figures, and passes the change reverted', () => {
    copyFileSync(path.join(SAMPLE, 'app.slower.js'), path.join(repo(), 'app.js'));
    const slower = measure();
    expect(slower.code, slower.stderr).toBe(1);
    const [verdict] = slower.report.verdicts;
    expect(verdict).toMatchObject({ label: 'service', pass: false, problems: [] });
    const [target] = verdict!.targets;
    expect(target).toMatchObject({ name: 'req/s vs baseline', referenceLabel: 'baseline', target: { metric: 'requestsPerSecond', against: 'baseline', atLeast: 0.6 } });
    expect(target!.ratio!).toBeLessThan(0.6);
    expect(target!.shown!.value).toMatch(/ req\/s$/);
    // Both ran with the probe in them, by NODE_OPTIONS --import, reporting over the channel the harness gave.
    expect(slower.report.servers.map((s) => [s.label, s.runtime !== undefined])).toEqual([['baseline', true], ['service', true]]);
    expect(slower.report.servers[0]!.title).toMatch(/^git HEAD \([0-9a-f]+\)$/);

    writeFileSync(path.join(repo(), 'app.js'), shipped);
    const reverted = measure();
    expect(reverted.code, `${reverted.stderr}\n${JSON.stringify(reverted.report.verdicts)}`).toBe(0);
    expect(reverted.report.pass).toBe(true);
    // The baseline's checkout is gone with the run.
    expect(spawnSync('git', ['worktree', 'list'], { cwd: repo(), encoding: 'utf8' }).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('loads the probe into the service by --import, its figures written to the file HOTPATH_FIGURES_FILE names', async () => {
    const figures = path.join(repo(), 'figures.jsonl');
    const port = String(20_000 + Math.floor(Math.random() * 10_000));
    const child = spawnSync(
      process.execPath,
      ['--import', 'hot-path/probe', '--input-type=module', '-e', "await import('./app.js'); setTimeout(() => process.exit(0), 700);"],
      { cwd: repo(), encoding: 'utf8', timeout: 10_000, env: { ...process.env, PORT: port, HOTPATH_FIGURES_FILE: figures, HOTPATH_SAMPLE_MS: '200' } },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(existsSync(figures)).toBe(true);
    const lines = readFileSync(figures, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; port?: number; figures?: { heapUsed: number; wallMs: number } });
    expect(lines[0]).toMatchObject({ type: 'listening', port: Number(port) });
    const samples = lines.filter((line) => line.type === 'sample');
    expect(samples.length).toBeGreaterThanOrEqual(2);
    // Each sample covers the time since the one before.
    for (const sample of samples) expect(sample.figures!.wallMs).toBeLessThan(400);
    expect(samples[0]!.figures!.heapUsed).toBeGreaterThan(0);
  });
});
