import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';
import type { ServerRun } from '../result.ts';
import { median } from '../stats.ts';

/**
 * req/s over the last quarter of the measured phase (at least one second): the median of the quarter's
 * seconds, so one second disturbed by something else on the machine does not decide it.
 */
export function lastQuarter(run: ServerRun): number | undefined {
  const seconds = run.load?.perSecond;
  if (!seconds || seconds.length < 2) return undefined;
  return median(seconds.slice(-Math.max(1, Math.floor(seconds.length / 4))));
}

export const lateRequestsPerSecond = defineMetric({
  id: 'lateRequestsPerSecond',
  name: 'late req/s',
  unit: 'req/s',
  means: 'the median second of the last quarter of the measured phase: how fast the server still is after it has served for a while.',
  better: 'higher',
  judged: 'reference',
  perTurn: false,
  read: lastQuarter,
  format: (v) => `${integer(v)} req/s`,
});
