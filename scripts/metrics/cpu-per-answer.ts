import { defineMetric } from '../metric.ts';
import { coresUsed } from './cores-used.ts';

/**
 * The work an answer costs, whatever bounds the rate: at a few connections a fast server's req/s is held by
 * what it waits on, so its req/s ratio to a slower one shrinks as the machine gets faster; this one does not.
 */
export const cpuPerAnswer = defineMetric({
  id: 'cpuPerAnswer',
  name: 'CPU time per answer',
  unit: 'ms/answer',
  means:
    "milliseconds of CPU time (all the server's processes and threads, from /proc) per answer over the measured phase or turn: what one request costs the machine, however long it waits on something else.",
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => {
    const cores = coresUsed.read(run);
    const rate = run.load?.requestsPerSecond.mean;
    return cores !== undefined && rate !== undefined && rate > 0 ? (cores * 1000) / rate : undefined;
  },
  format: (v) => `${v.toFixed(v < 10 ? 2 : 1)} ms/answer`,
});
