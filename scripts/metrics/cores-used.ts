import { defineMetric } from '../metric.ts';

/** From /proc: the CPU time of the server's processes (a cluster's workers too) over the wall time of the phase or turn. */
export const coresUsed = defineMetric({
  id: 'coresUsed',
  name: 'cores used',
  unit: 'cores',
  means:
    "the CPU time of all the server's processes and their threads over the wall time, from /proc: 1 is one core kept busy. A server that computes on one thread cannot go past about one, whatever the machine has.",
  better: 'higher',
  judged: 'reference',
  perTurn: true,
  read: (run) => (run.processes && run.processes.length > 0 ? run.processes.reduce((sum, p) => sum + p.cores, 0) : undefined),
  format: (v) => `${v.toFixed(2)} cores`,
});
