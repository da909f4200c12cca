import { defineMetric } from '../metric.ts';
import { integer, ratio } from '../format.ts';
import { besideRatios } from '../fresh-copy.ts';
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
  // Each server's median second, and the range of the ratios kept is the median of. The two medians'
  // ratio can differ from kept, which compares each second with its neighbours.
  detail: ({ freshCopy: fresh }) => {
    if (!fresh || fresh.aged.length === 0) return '';
    const ratios = besideRatios(fresh.aged, fresh.fresh);
    const spread = ratios.length > 0 ? `; each aged second over the copy's beside it ${ratio(Math.min(...ratios))} to ${ratio(Math.max(...ratios))}` : '';
    return `aged ${integer(median(fresh.aged))} vs fresh copy ${integer(median(fresh.fresh))} req/s, ${fresh.aged.length} s each in turns${spread}`;
  },
  needs: (load) => (load.freshCopy ? undefined : 'throughputKept needs a fresh copy to compare with (load.freshCopy)'),
});
