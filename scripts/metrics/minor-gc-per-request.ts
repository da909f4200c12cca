import { defineMetric } from '../metric.ts';

/** Unlike the share of time, it does not fall just because a server got slower elsewhere. */
export const minorGcPerRequest = defineMetric({
  id: 'minorGcPerRequest',
  name: 'scavenge time per request',
  unit: 'ms/req',
  means: 'milliseconds of scavenging (young-generation collection) per answer: what each request costs the collector, whatever else slows the server.',
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => (run.runtime && run.load && run.load.requests > 0 ? run.runtime.gc.minor.ms / run.load.requests : undefined),
  format: (v) => `${v.toFixed(2)} ms/req`,
});
