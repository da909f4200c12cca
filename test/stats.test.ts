import { describe, expect, it } from 'vitest';
import { countAtMost, cv, drawnAtRandom, median, medianInterval, percentile } from '../scripts/stats.ts';

describe('stats', () => {
  it('counts the values of a sorted list at most a given one', () => {
    expect(countAtMost([], 5)).toBe(0);
    expect(countAtMost([1, 2, 2, 5], 0)).toBe(0);
    expect(countAtMost([1, 2, 2, 5], 2)).toBe(3);
    expect(countAtMost([1, 2, 2, 5], 9)).toBe(4);
  });

  it('takes medians and nearest-rank percentiles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 0.99)).toBe(99);
    expect(percentile([], 0.5)).toBeUndefined();
    expect(cv([10, 10, 10])).toBe(0);
    expect(cv([9, 11])).toBeCloseTo(Math.SQRT2 / 10, 5);
  });

  it('gives an interval for the median from order statistics, wider for fewer values', () => {
    // 5 values: the lowest and highest cover the median 94% of the time.
    expect(medianInterval([5, 1, 4, 2, 3])).toEqual({ low: 1, high: 5, confidence: 0.9375 });
    // 7 values: the 2nd lowest and 2nd highest (87.5%); 11: the 3rd (93%), the 4th would fall under 85%.
    const seven = medianInterval([7, 6, 5, 4, 3, 2, 1]);
    expect([seven.low, seven.high, seven.confidence]).toEqual([2, 6, 0.875]);
    const eleven = medianInterval([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect([eleven.low, eleven.high]).toEqual([3, 9]);
    expect(eleven.confidence).toBeCloseTo(0.935, 3);
    // Too few for 90%: the whole range, and the confidence says what it covers.
    expect(medianInterval([2, 1, 3])).toEqual({ low: 1, high: 3, confidence: 0.75 });
  });

  it('covers the median of noisy ratios about as often as it says', () => {
    // Ratios around 1.5 with ±20% noise: the 5-value interval contains the true median ~94% of the time.
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    let covered = 0;
    const trials = 2000;
    for (let i = 0; i < trials; i++) {
      const values = Array.from({ length: 5 }, () => 1.5 * (0.8 + 0.4 * random()));
      const { low, high } = medianInterval(values);
      if (low <= 1.5 && 1.5 <= high) covered += 1;
    }
    expect(covered / trials).toBeGreaterThan(0.9);
    expect(covered / trials).toBeLessThan(0.97);
  });

  it('draws a sample without repeats, from anywhere in the list', () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const sample = drawnAtRandom(items, 100);
    expect(sample).toHaveLength(100);
    expect(new Set(sample).size).toBe(100);
    expect(sample.every((i) => items.includes(i))).toBe(true);
    // Not the first hundred, nor in order: over 20 draws, the last tenth of the list is drawn from too.
    const drawnFromEnd = Array.from({ length: 20 }, () => drawnAtRandom(items, 100)).filter((s) => s.some((i) => i >= 900)).length;
    expect(drawnFromEnd).toBeGreaterThan(15);
    expect(items).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    // More asked than there are: all of them, once each.
    expect(drawnAtRandom([1, 2, 3], 10).sort()).toEqual([1, 2, 3]);
    expect(drawnAtRandom([], 5)).toEqual([]);
  });
});
