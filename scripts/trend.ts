// The heap's trend over a run, robust to the GC sawtooth: the heap after each collection (the lower
// envelope) is what a leak raises, so fit a line through the lowest of each window of time. The probe reads
// the heap as its collections left it (heapAfterGc); a sample's heapUsed falls anywhere on the young
// generation's sawtooth (tens of MB on Node 24), and is the fallback only for a sample taken before any.
export interface HeapPoint {
  /** Milliseconds since the measured phase began. */
  wallMs: number;
  heapUsed: number;
  /** The lowest heap a collection left since the previous sample (scripts/probe/messages.ts). */
  heapAfterGc?: number;
}

export interface HeapTrend {
  /** Slope of the lower envelope, bytes per second: ~0 for a steady server, positive for a growing one. */
  bytesPerSecond: number;
  /** The envelope's first and last points, and the highest heap seen, in bytes. */
  first: number;
  last: number;
  peak: number;
  points: number;
}

export function heapTrend(samples: HeapPoint[], windowMs = 3000): HeapTrend | undefined {
  if (samples.length < 3) return undefined;
  const low = (p: HeapPoint) => p.heapAfterGc ?? p.heapUsed;
  const windows = new Map<number, HeapPoint>();
  for (const sample of samples) {
    const key = Math.floor(sample.wallMs / windowMs);
    const lowest = windows.get(key);
    if (!lowest || low(sample) < low(lowest)) windows.set(key, sample);
  }
  const envelope = [...windows.values()].sort((a, b) => a.wallMs - b.wallMs);
  const points = envelope.length >= 3 ? envelope : samples;
  return {
    bytesPerSecond: slope(points.map((p) => [p.wallMs / 1000, low(p)])),
    first: low(points[0]!),
    last: low(points.at(-1)!),
    peak: Math.max(...samples.map((s) => s.heapUsed)),
    points: points.length,
  };
}

/**
 * The heap a full collection left at two moments (`at` in ms), as a trend: what stayed alive between them,
 * per second. Only a full collection frees what was promoted to the old generation, so this is the heap's
 * growth a leak makes and garbage does not. `peak` is the highest heap the samples between them saw.
 */
export function keptHeapTrend(start: { at: number; heap: number }, end: { at: number; heap: number }, samples: HeapPoint[]): HeapTrend {
  const seconds = (end.at - start.at) / 1000;
  return {
    bytesPerSecond: seconds > 0 ? (end.heap - start.heap) / seconds : 0,
    first: start.heap,
    last: end.heap,
    peak: Math.max(start.heap, end.heap, ...samples.map((s) => s.heapUsed)),
    points: 2,
  };
}

/** Least-squares slope of y over x. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const [x, y] of points) {
    covariance += (x - meanX) * (y - meanY);
    variance += (x - meanX) ** 2;
  }
  return variance > 0 ? covariance / variance : 0;
}
