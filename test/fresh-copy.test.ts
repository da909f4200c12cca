import { describe, expect, it } from 'vitest';
import { runBench, specFor } from '../scripts/bench.ts';
import { keptOf } from '../scripts/fresh-copy.ts';
import type { LoadProgress } from '../scripts/load.ts';
import type { ServerRun } from '../scripts/result.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { judge } from '../scripts/verdict.ts';
import { throughputKept } from '../scripts/metrics/throughput-kept.ts';
import { fixture } from './helpers.ts';
import { sampleManifest } from './sample.ts';

describe('throughput kept, against a fresh copy', () => {
  it("is the median ratio of each aged second to the fresh copy's seconds before and after it", () => {
    // Turns 100 100 | 20 100 | 90 110: ratios 1, 0.2, 0.2, 0.9, 0.82.
    expect(keptOf([100, 20, 90], [100, 100, 110])).toBeCloseTo(90 / 110);
    expect(keptOf([], [100])).toBeUndefined();
    expect(keptOf([100], [0])).toBeUndefined();
  });

  it('shows the medians of both servers and the spread of the ratios kept is taken from', () => {
    const freshCopy = { aged: [100, 20, 90], fresh: [100, 100, 110], kept: keptOf([100, 20, 90], [100, 100, 110]) };
    expect(throughputKept.detail!({ freshCopy } as ServerRun)).toBe(
      "aged 90 vs fresh copy 100 req/s, 3 s each in turns; each aged second over the copy's beside it 0.20x to 1.00x",
    );
  });

  it('holds against a slow spell of the machine of one to three turns', () => {
    // A steady server, 1,000 req/s, taking turns with its copy (aged, fresh, aged...) while the machine
    // runs at a third of its speed for some turns. The median of each server's turns over the other's
    // read a third or three times for a spell over turns 3-5 or 2-4.
    const slow = (rate: number, turn: number, spell: number[]) => (spell.includes(turn) ? rate / 3 : rate);
    for (const spell of [[2, 3], [3, 4], [4, 5], [2, 3, 4], [3, 4, 5], [1], [4]]) {
      const turns = [1, 2, 3, 4, 5, 6].map((turn) => slow(1000, turn, spell));
      const aged = [turns[0]!, turns[2]!, turns[4]!];
      const fresh = [turns[1]!, turns[3]!, turns[5]!];
      expect(keptOf(aged, fresh), `a spell over turns ${spell.join(', ')}`).toBeCloseTo(1);
    }
  });

  it('loads each server and a fresh copy of it in turns: an ageing server keeps little, a steady one about all', async () => {
    const manifest = sampleManifest({
      load: { path: '/', connections: 4, warmupSeconds: 1, durationSeconds: 3, freshCopy: { pairs: 2 } },
      stages: [{ file: '1-steady.ts', title: 'steady', changes: 'same cost at any age', targets: [{ metric: throughputKept, against: 'itself', atLeast: 0.75 }] }],
      goal: [{ metric: throughputKept, against: 'itself', atLeast: 0.75 }],
    });
    // The ageing server is judged as the trainee's file: only a server held to throughputKept gets a fresh copy.
    const exercise = { manifest, dir: '', solutionsDir: '', serverFile: fixture('slows-with-age.ts'), shippedFile: fixture('busy-10ms.ts'), stageFile: () => fixture('busy-10ms.ts') };
    const turns: string[] = [];
    const onEvent = (event: { type: string; label?: string; progress?: LoadProgress }) => {
      if (event.type === 'load' && event.progress!.phase === 'beside a fresh copy') turns.push(`${event.label}: ${event.progress!.detail}`);
    };
    const report = await runBench(exercise, [specFor(exercise, 'mine'), specFor(exercise, 1)], { onEvent });
    const [broken, steady] = report.servers;
    console.log(report.servers.map((s) => `${s.label}: aged ${s.freshCopy?.aged.map(Math.round)} fresh ${s.freshCopy?.fresh.map(Math.round)}`).join('\n'));
    expect(broken!.failure).toBeUndefined();
    expect(broken!.freshCopy!.aged).toHaveLength(2);
    expect(broken!.freshCopy!.fresh).toHaveLength(2);
    // ~10 s old against ~3 s: 50 ms a request against ~20.
    expect(broken!.freshCopy!.kept).toBeLessThan(0.7);
    expect(steady!.freshCopy!.kept).toBeGreaterThan(0.75);
    expect(steady!.freshCopy!.kept).toBeLessThan(1.33);
    const verdict = judge(manifest, report.servers).find((v) => v.label === 'stage 1')!;
    expect(verdict.targets[0]).toMatchObject({ name: 'throughput kept', pass: true });
    // Progress for each turn and the copy's warm-up, and no server left running, the copies included.
    expect(turns.filter((t) => t.startsWith('mine: turn'))).toHaveLength(2);
    expect(turns.some((t) => t === 'stage 1: the fresh copy warms up')).toBe(true);
    expect(liveServerCount()).toBe(0);
  });
});
