import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';

export const latencyP99 = defineMetric({
  id: 'latencyP99',
  name: 'p99 latency',
  unit: 'ms',
  means: 'the time within which 99 answers in 100 arrived: the slow tail a user meets, which a mean hides.',
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => run.load?.latency.p99,
  format: (v) => `${integer(v)} ms`,
});
