import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';

/** Read from the probe's active resources (process.getActiveResourcesInfo), sampled through the phase. */
export const timersPeak = defineMetric({
  id: 'timersPeak',
  name: 'timers (peak)',
  unit: 'timers',
  means:
    "the most timers active at once (the `Timeout`s among the active resources): a client keeps one for each request it is still waiting on, so a pile of them is work queued, not done.",
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => {
    const peak = run.runtime?.activeResourcesPeak;
    return peak ? (peak.Timeout ?? 0) : undefined;
  },
  format: (v) => `${integer(v)} timers`,
});
