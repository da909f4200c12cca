import { describe, expect, it } from 'vitest';
import { bar, signedPercent } from '../scripts/format.ts';
import { goalFigures, rampSection, renderJson, renderReport, renderVerdict } from '../scripts/report.ts';
import type { RampStep } from '../scripts/result.ts';
import { MEASURED_SERVICE_ID, type RunReport } from '../scripts/result.ts';
import { judge } from '../scripts/verdict.ts';
import { heapGrowth } from '../scripts/metrics/heap-growth.ts';
import { minorGcShare } from '../scripts/metrics/minor-gc-share.ts';
import { requestsPerSecond } from '../scripts/metrics/requests-per-second.ts';
import { loadResult, runtimeFigures, sampleManifest, serverRun } from './sample.ts';

function sampleReport(): RunReport {
  const manifest = sampleManifest();
  const servers = [
    serverRun('broken', 'broken', 60),
    serverRun('stage 1', 'stage', 8_000),
    serverRun('stage 2', 'stage', 9_000),
    serverRun('ceiling', 'ceiling', 12_000),
  ];
  const verdicts = judge(manifest, servers);
  return { exercise: { id: manifest.id, title: manifest.title }, node: 'v20.0.0', startedAt: '2026-11-29T00:00:00.000Z', load: manifest.load, servers, verdicts, pass: false };
}

describe('report', () => {
  it('names the connections the servers were loaded with: the turns\' own when they set them', () => {
    const report = sampleReport();
    const head = (r: RunReport) => renderReport(r).replace(/\x1b\[[0-9;]*m/g, '').split('\n')[1]!;
    const turns = { rounds: 4, seconds: 1, maxRounds: 11 };
    expect(head({ ...report, load: { ...report.load, connections: 60 } })).toContain(' · 60 connections · ');
    expect(head({ ...report, turns, load: { ...report.load, connections: 60, turns: { connections: 80 } } })).toContain(' · 80 connections · ');
    expect(head({ ...report, turns, load: { ...report.load, connections: 60, turns: {} } })).toContain(' · 60 connections · ');
  });

  it('says which targets, too close to call, asked for the rounds past the fewest, and only when some did', () => {
    const report = sampleReport();
    const head = (r: RunReport) => renderReport(r).replace(/\x1b\[[0-9;]*m/g, '').split('\n')[1]!;
    expect(head({ ...report, turns: { rounds: 4, seconds: 1, maxRounds: 11 } })).toContain('4 rounds of 1 s turns (at most 11) · ');
    const longer = { rounds: 7, seconds: 1, maxRounds: 11, moreRoundsFor: ['stage 2: req/s vs ceiling'] };
    expect(head({ ...report, turns: longer })).toContain('7 rounds of 1 s turns (at most 11; more rounds for stage 2: req/s vs ceiling, too close to call) · ');
  });

  it("words a server's verdict as the run's last line does: too close to call, or cannot be judged here, not FAIL", () => {
    const report = sampleReport();
    const verdict = report.verdicts.find((v) => v.label === 'stage 1')!;
    const head = (changes: object) => renderVerdict({ ...verdict, pass: false, ...changes }, report.servers).replace(/\x1b\[[0-9;]*m/g, '').split('\n')[0];
    expect(head({})).toMatch(/ FAIL$/);
    expect(head({ tooClose: true })).toMatch(/ TOO CLOSE TO CALL$/);
    expect(head({ tooClose: true, cannotJudge: 'the server has 1 core here' })).toMatch(/ CANNOT BE JUDGED HERE$/);
    expect(head({ cannotJudge: 'the server has 1 core here' })).toMatch(/ CANNOT BE JUDGED HERE$/);
  });

  it('heads an exercise by its id and title, and a service measured with `workshop measure` as a service', () => {
    const report = sampleReport();
    expect(renderReport(report).replace(/\x1b\[[0-9;]*m/g, '')).toMatch(new RegExp(`^Exercise ${report.exercise.id} · `));
    const service = { ...report, exercise: { id: MEASURED_SERVICE_ID, title: 'quotes, GET /quote' } };
    expect(renderReport(service).replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/^Service · quotes, GET \/quote\n/);
  });

  it('names the Node flags each server ran with, and only when one did', () => {
    const report = sampleReport();
    expect(renderReport(report)).not.toContain('Node flags');
    report.servers[1]!.nodeFlags = ['--max-semi-space-size=256'];
    expect(renderReport(report)).toContain('Node flags: stage 1 --max-semi-space-size=256');
  });

  it("gives a run that is not judged the figures of the exercise's goal, with the goal and what each means", () => {
    const report = sampleReport();
    const text = goalFigures(
      [
        { metric: requestsPerSecond, against: 'broken', atLeast: 10 },
        { metric: heapGrowth, against: 'broken', atMost: 0.3 },
      ],
      [report.servers[0]!],
    );
    expect(text).toContain("the figures this exercise's goal is set on");
    expect(text).toMatch(/req\/s: broken 60 req\/s .*goal: at least 10\.0x the broken server's/);
    expect(text).toMatch(/heap growth: broken not measured in this run .*goal: at most 0\.30x the broken server's/);
    expect(text).toMatch(/below zero/);
  });

  it('explains a heap growth below zero under the runtime table, and only then', () => {
    const report = sampleReport();
    report.servers[0]!.runtime = runtimeFigures(1000, 10, 5);
    report.servers[0]!.heap = { bytesPerSecond: 2e6, first: 50e6, last: 52e6, peak: 60e6, points: 4 };
    expect(renderReport(report)).not.toContain('heap growth below zero');
    report.servers[0]!.heap = { bytesPerSecond: -33.5e6, first: 150e6, last: 50e6, peak: 160e6, points: 4 };
    expect(renderReport(report)).toContain('heap growth below zero: the slope of the heap');
  });

  it("shows each process of a server of more than one (a cluster's workers), and only then", () => {
    const report = sampleReport();
    report.servers[0]!.processes = [{ pid: 10, role: 'main', cores: 0.9, utilization: 0.95 }];
    expect(renderReport(report)).not.toContain('processes of each server');
    report.servers[1]!.processes = [
      { pid: 20, role: 'main', cores: 0.01, utilization: 0.01 },
      { pid: 21, role: 'worker', cores: 0.96, utilization: 0.99 },
      { pid: 22, role: 'worker', cores: 0.04, utilization: 0.03 },
    ];
    const text = renderReport(report).replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).toContain(`${report.servers[1]!.label}: main 0.01 cores, loop busy 1% · worker 21 0.96 cores, loop busy 99% · worker 22 0.04 cores, loop busy 3%`);
    expect(text).not.toContain(`${report.servers[0]!.label}: main 0.90`);
  });

  it('draws bars proportional to the value, never empty for a non-zero value', () => {
    expect(bar(100, 100, 40)).toBe('█'.repeat(40));
    expect(bar(50, 100, 40)).toBe('█'.repeat(20));
    expect(bar(0.01, 100, 40)).toBe('▏');
    expect(bar(0, 100, 40)).toBe('');
  });

  it('shows every server with its figures, a bar, and each target with measured, needed, now and margin', () => {
    const text = renderReport(sampleReport());
    expect(text).toContain('Exercise 99-sample · Sample');
    expect(text).toMatch(/broken\s+broken\s+60\s+3\s+1\s+2\s+3\s+9/);
    expect(text).toMatch(/ceiling\s+█{40}\s+12,000/);
    expect(text).toMatch(/stage 1\s+█{26}\S*\s+8,000/);
    // stage 1 against broken: 133.3x for 10x needed, i.e. >= 600 req/s in this run.
    expect(text).toMatch(/req\/s vs broken\s+133\.3x \(8,000 req\/s\)\s+≥ 10\.0x\s+≥ 600 req\/s \(broken 60 req\/s\)\s+\+1233%\s+ok/);
    // stage 2 against stage 1: 1.13x for 1.5x needed.
    expect(text).toMatch(/req\/s vs previous\s+1\.13x \(9,000 req\/s\)\s+≥ 1\.50x\s+≥ 12,000 req\/s \(stage 1 8,000 req\/s\)\s+-25%\s+short/);
    expect(text).toMatch(/FAIL\s*$/);
  });

  it('shows heap growth and minor-GC share targets in their own units', () => {
    const runtime = (share: number, count: number) => runtimeFigures(10_000, share * 10_000, count);
    const heap = (bytesPerSecond: number) => ({ bytesPerSecond, first: 40e6, last: 60e6, peak: 70e6, points: 5 });
    const manifest = sampleManifest({
      ceilingFile: undefined,
      stages: [{ file: '1-fix.ts', title: 'fix', changes: 'fix', targets: [
        { metric: heapGrowth, against: 'broken', atMost: 0.1 },
        { metric: minorGcShare, against: 'broken', atMost: 0.34 },
      ] }],
    });
    const servers = [
      serverRun('broken', 'broken', 100, { heap: heap(8e6), runtime: runtime(0.25, 900) }),
      serverRun('stage 1', 'stage', 120, { heap: heap(0.2e6), runtime: runtime(0.05, 80) }),
    ];
    const text = renderReport({ ...sampleReport(), servers, verdicts: judge(manifest, servers), pass: true });
    expect(text).toMatch(/heap growth vs broken\s+0\.03x \(0\.20 MB\/s\)\s+≤ 0\.10x\s+≤ 0\.80 MB\/s \(broken 8\.00 MB\/s\)/);
    expect(text).toMatch(/minor GC share vs broken\s+0\.20x \(5\.0% of time\)\s+≤ 0\.34x/);
    expect(text).toMatch(/broken\s+50\.0 MB\s+8\.00 MB\/s\s+25\.0% \(900\)/);
  });

  it('draws each server\'s seconds as a sparkline, so a falling pace shows', () => {
    const over = (perSecond: number[]) => loadResult(100, { perSecond });
    const servers = [
      serverRun('broken', 'broken', undefined, { load: over([800, 600, 400, 200]) }),
      serverRun('stage 1', 'stage', undefined, { load: over([900, 910, 905, 900]) }),
    ];
    const text = renderReport({ ...sampleReport(), servers, verdicts: [], pass: false });
    expect(text).toMatch(/broken\s+█▆▅▃\s+\S*800 → 200/);
    expect(text).toMatch(/stage 1\s+████\s+\S*900 → 900/);
  });

  it('shows why a server failed, with what it printed', () => {
    const report = sampleReport();
    report.servers[1] = serverRun('stage 1', 'stage', undefined, { failure: 'the server crashed during the load (exit code 1)', output: 'TypeError: x is undefined' });
    report.verdicts = judge(sampleManifest(), report.servers);
    const text = renderReport(report);
    expect(text).toContain('the server crashed during the load (exit code 1)');
    expect(text).toContain('│ TypeError: x is undefined');
    expect(text).toMatch(/stage 1\s+\(not measured\)/);
  });

  it('renders the same model as JSON', () => {
    const report = sampleReport();
    const parsed = JSON.parse(renderJson(report)) as RunReport;
    expect(parsed.servers.map((s) => s.load?.requestsPerSecond.mean)).toEqual([60, 8_000, 9_000, 12_000]);
    expect(parsed.verdicts[0]!.targets[0]!.ratio).toBeCloseTo(133.33, 1);
    expect(parsed.pass).toBe(false);
  });
});

describe('signedPercent', () => {
  it('keeps a decimal under one percent, so a shortfall never reads as -0%', () => {
    expect(signedPercent(0.634)).toBe('+63%');
    expect(signedPercent(-0.25)).toBe('-25%');
    expect(signedPercent(0)).toBe('+0%');
    expect(signedPercent(-0.0003)).toBe('-0.03%');
    expect(signedPercent(-0.004)).toBe('-0.4%');
    expect(signedPercent(0.0099)).toBe('+1%');
  });
  it("shows a ramp's steps by rate, the ones placing the knee marked, the interpolated knee and the steps measured again", () => {
    const step = (offered: number, achieved: number, p99: number, extra: Partial<RampStep> = {}): RampStep => ({
      offered, achieved, latency: { p50: p99 / 2, p90: p99, p99, max: p99, mean: p99 / 2 }, errors: 0, timeouts: 0, non2xx: 0, seconds: 1, ...extra,
    });
    const steps = [step(30, 30, 20, { seconds: 4 }), step(75, 75, 40), step(120, 120, 50), step(135, 135, 60, { settle: true }), step(150, 140, 900, { settle: true }), step(150, 141, 800, { settle: true }), step(165, 140, 1500), step(210, 140, 1600)];
    const run = { ...serverRun('broken', 'broken', 100), ramp: {
      from: 30, to: 210, stepSeconds: 2, steps, lowLoadP99: 20, cliff: 80,
      knee: { offered: 135, achieved: 135, rate: 138.4, step: 3, reason: 'at 150 req/s it p99 900 ms, over 10x its low-load 20 ms (2 tries)' },
      remeasured: [step(120, 100, 900, { elsewhere: 0.9 })],
    } };
    const text = rampSection(run).replace(/\u001b\[[0-9;]*m/g, '');
    expect(text).toContain('broken: ramp 30 → 210 req/s, 8 steps in 11 s');
    expect(text).toMatch(/135\s+135\s+30\s+60\s+\S+\s+keeps up ◀ knee · placing the knee/);
    expect(text).toContain('knee: 138 req/s (kept up at 135 req/s; at 150 req/s it p99 900 ms, over 10x its low-load 20 ms (2 tries))');
    expect(text).toContain('measured again, other programs busy on the machine: 120 req/s (0.9 cores)');
    expect(text).toContain('p99 at the highest rate 80.0x its low-load p99 (20 ms)');
  });
});
