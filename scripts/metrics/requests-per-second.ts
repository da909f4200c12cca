import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';

export const requestsPerSecond = defineMetric({
  id: 'requestsPerSecond',
  name: 'req/s',
  unit: 'req/s',
  means: "answers a second over the measured phase (or the turns), with the load's connections always busy: how much work the server gets through.",
  better: 'higher',
  judged: 'reference',
  perTurn: true,
  read: (run) => run.load?.requestsPerSecond.mean,
  format: (v) => `${integer(v)} req/s`,
});
