import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeFlagsComment } from '../scripts/bench.ts';
import { heapTrend, keptHeapTrend, slope } from '../scripts/trend.ts';

/** A heap that climbs by `baseline` bytes a second under a sawtooth of garbage collected every 4 s. */
function sawtooth(baseline: number, seconds = 20): Array<{ wallMs: number; heapUsed: number }> {
  return Array.from({ length: seconds }, (_, i) => ({
    wallMs: (i + 1) * 1000,
    heapUsed: 50e6 + baseline * (i + 1) + (i % 4) * 30e6,
  }));
}

describe('heap trend', () => {
  it('fits a straight line', () => {
    expect(slope([[0, 1], [1, 3], [2, 5]])).toBeCloseTo(2);
    expect(slope([[1, 7]])).toBe(0);
  });

  it('sees through the GC sawtooth: flat stays ~0, a leak shows its rate', () => {
    const flat = heapTrend(sawtooth(0))!;
    const leaking = heapTrend(sawtooth(5e6))!;
    // A 90 MB tooth sampled once a second leaves some aliasing; it stays small beside a leak's rate.
    expect(Math.abs(flat.bytesPerSecond)).toBeLessThan(1e6);
    expect(leaking.bytesPerSecond).toBeGreaterThan(4e6);
    expect(leaking.bytesPerSecond).toBeLessThan(6e6);
    expect(flat.first).toBe(50e6); // the envelope starts at the lowest sample of the first window
    expect(leaking.peak).toBeGreaterThan(leaking.last);
  });

  it('takes the heap as the collections left it where the probe read it, not where a sample fell on the sawtooth', () => {
    // Six samples a second apart, as a short measured phase gives: heapUsed anywhere between 45 and 81 MB
    // (Node 24's young generation), the heap after each sample's collections flat, then climbing 5 MB/s.
    const used = [81, 74, 51, 80, 60, 45].map((mb) => mb * 1e6);
    const samples = (after: (i: number) => number) => used.map((heapUsed, i) => ({ wallMs: (i + 1) * 1000, heapUsed, heapAfterGc: after(i) }));
    // Fitted on heapUsed alone, the same samples read a slope of several MB/s either way.
    expect(Math.abs(heapTrend(used.map((heapUsed, i) => ({ wallMs: (i + 1) * 1000, heapUsed })))!.bytesPerSecond)).toBeGreaterThan(4e6);
    const flat = heapTrend(samples(() => 40e6))!;
    const leaking = heapTrend(samples((i) => 40e6 + 5e6 * i))!;
    expect(flat.bytesPerSecond).toBe(0);
    expect(leaking.bytesPerSecond).toBeCloseTo(5e6, -4);
    expect([flat.first, flat.last, flat.peak]).toEqual([40e6, 40e6, 81e6]);
  });

  it('reads what two full collections left as what the heap kept per second between them', () => {
    const samples = [90, 120, 70].map((mb, i) => ({ wallMs: 2000 * (i + 1), heapUsed: mb * 1e6 }));
    const kept = keptHeapTrend({ at: 1000, heap: 20e6 }, { at: 7000, heap: 80e6 }, samples);
    expect(kept).toEqual({ bytesPerSecond: 10e6, first: 20e6, last: 80e6, peak: 120e6, points: 2 });
    expect(keptHeapTrend({ at: 1000, heap: 20e6 }, { at: 1000, heap: 20e6 }, []).bytesPerSecond).toBe(0);
  });

  it('needs a few samples', () => {
    expect(heapTrend(sawtooth(1e6, 2))).toBeUndefined();
  });
});

describe('node-flags comment', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hotpath-flags-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const file = (text: string) => {
    const name = path.join(dir, `server-${++files}.ts`);
    writeFileSync(name, text);
    return name;
  };

  it('reads the flags a server file asks for', () => {
    expect(nodeFlagsComment(file('// node-flags: --max-semi-space-size=64 --trace-gc\nimport x from "y";\n'))).toEqual(['--max-semi-space-size=64', '--trace-gc']);
    expect(nodeFlagsComment(file('import x from "y";\n'))).toEqual([]);
    expect(nodeFlagsComment(file('// x node-flags: --not-this\n'))).toEqual([]);
  });

  it('refuses words that are not flags', () => {
    expect(() => nodeFlagsComment(file('// node-flags: --inspect; rm -rf /\n'))).toThrow(/takes Node flags.*not: --inspect; rm -rf \//);
  });
});
