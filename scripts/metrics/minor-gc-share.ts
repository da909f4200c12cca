import { defineMetric } from '../metric.ts';
import { percent } from '../format.ts';

export const minorGcShare = defineMetric({
  id: 'minorGcShare',
  name: 'minor GC share',
  unit: '% of time',
  means: 'the share of wall time spent in scavenges (young-generation collections); it also falls when a server gets slower elsewhere, so targets use the time per request.',
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => run.runtime?.gc.minor.share,
  format: (v) => `${percent(v)} of time`,
});
