import { defineMetric } from '../metric.ts';

/** bytes/s: the slope of the heap's lower envelope over the measured phase (or within each turn). */
export const heapGrowth = defineMetric({
  id: 'heapGrowth',
  name: 'heap growth',
  unit: 'MB/s',
  means:
    "the slope of the heap's low points (what is left after a collection) over the measured phase: what the server keeps. It reads below zero when the collector frees more than the phase adds, e.g. the warm-up's garbage collected late; near zero or below is a server that keeps nothing.",
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => run.heap?.bytesPerSecond,
  format: (v) => `${(v / 1e6).toFixed(2)} MB/s`,
});
