import { defineMetric } from '../metric.ts';
import { integer, ratio } from '../format.ts';
import { median } from '../stats.ts';

/**
 * What a server keeps of its speed as it ages: its req/s after the measured phase over a fresh copy's, the
 * two loaded in turns (see fresh-copy.ts). A ratio already, judged against 'itself'.
 */
export const throughputKept = defineMetric({
  id: 'throughputKept',
  name: 'throughput kept',
  unit: "x a fresh copy's req/s",
  means: "the aged server's req/s over a fresh copy's of the same file, loaded in turns of a second after the measured phase (the median ratio of each aged second to the copy's seconds before and after it): 1x keeps its speed as it ages, less is a server that slows with age.",
  better: 'higher',
  judged: 'itself',
  perTurn: false,
  read: (run) => run.freshCopy?.kept,
  format: (v) => `${ratio(v)} of a fresh copy's req/s`,
  detail: ({ freshCopy: fresh }) =>
    fresh && fresh.aged.length > 0 ? `aged ${integer(median(fresh.aged))} vs fresh copy ${integer(median(fresh.fresh))} req/s, ${fresh.aged.length} s each in turns` : '',
  needs: (load) => (load.freshCopy ? undefined : 'throughputKept needs a fresh copy to compare with (load.freshCopy)'),
});
