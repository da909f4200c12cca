import { describe, expect, it } from 'vitest';
import { coresElsewhere, cpuSnapshot, type CpuSnapshot } from '../scripts/machine-load.ts';

const snapshot = (total: number, busy: number, own: Array<[number, number]>): CpuSnapshot => ({ total, busy, own: new Map(own) });

describe('machine load', () => {
  it("counts the machine's busy time less this process tree's as other programs', in cores", () => {
    // 2 cores, 100 ticks each: 150 busy ticks, 100 of them ours (this process and a server it started).
    const before = snapshot(1000, 400, [[1, 50], [2, 10]]);
    const after = snapshot(1200, 550, [[1, 70], [2, 90]]);
    expect(coresElsewhere(before, after, 2)).toBeCloseTo(0.5, 5);
    // A process of ours started in between counts from zero; nothing is ever negative.
    expect(coresElsewhere(before, snapshot(1200, 450, [[1, 70], [2, 90], [3, 20]]), 2)).toBe(0);
    expect(coresElsewhere(before, before, 2)).toBe(0);
  });

  it('reads /proc on Linux: the machine and this process among its own', () => {
    const now = cpuSnapshot();
    if (process.platform !== 'linux') return expect(now).toBeUndefined();
    expect(now!.total).toBeGreaterThan(now!.busy);
    expect(now!.own.has(process.pid)).toBe(true);
  });
});
