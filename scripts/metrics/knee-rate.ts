import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';

export const kneeRate = defineMetric({
  id: 'kneeRate',
  name: 'knee',
  unit: 'req/s',
  means: 'in a ramp, the offered rate at which the server stops keeping up (answers under 90% of it, or p99 past 10x its low-load p99).',
  better: 'higher',
  judged: 'reference',
  perTurn: false,
  // The interpolated rate where the server stopped keeping up; results from before it have only the step's answers.
  read: (run) => run.ramp?.knee?.rate ?? run.ramp?.knee?.achieved,
  format: (v) => `${integer(v)} req/s`,
  needs: (load) => (load.ramp ? undefined : 'kneeRate needs a ramped load (load.ramp)'),
});
