// The statistics every measurement shares: median, percentiles, spread, and an interval for a median.

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile (fraction 0-1) of unsorted values; undefined when there are none. */
export function percentile(values: readonly number[], fraction: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** Sample standard deviation; 0 for fewer than two values. */
export function sd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1));
}

/** Coefficient of variation (sample sd / mean); 0 for fewer than two values. */
export function cv(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  return mean !== 0 ? sd(values) / Math.abs(mean) : 0;
}

/** The chance that a fair coin thrown n times shows heads at most k times. */
function binomialAtMost(n: number, k: number): number {
  let term = 0.5 ** n;
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term = (term * (n - i + 1)) / i;
    sum += term;
  }
  return sum;
}

/**
 * A distribution-free interval for the median of the population the values were drawn from: the k-th
 * lowest and k-th highest values, with k the largest that still covers the median with `wanted` confidence
 * (order statistics; no assumption about the shape of the noise). With too few values for that
 * confidence it is the lowest and highest value, and `confidence` says what it covers.
 */
export function medianInterval(values: readonly number[], wanted = 0.85): { low: number; high: number; confidence: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  let k = 1;
  while (k + 1 <= n / 2 && 1 - 2 * binomialAtMost(n, k) >= wanted) k += 1;
  const confidence = n > 0 ? 1 - 2 * binomialAtMost(n, k - 1) : 0;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, confidence };
}

/** Up to `count` of `items`, drawn at random, each at most once: a sample to read whole where reading all costs too much. */
export function drawnAtRandom<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const wanted = Math.min(count, pool.length);
  for (let i = 0; i < wanted; i++) {
    const j = i + Math.floor(Math.random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, wanted);
}

/** How many of `sorted` (in ascending order) are at most `value`: a binary search. */
export function countAtMost(sorted: readonly number[], value: number): number {
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}
