import { defineMetric } from '../metric.ts';
import { integer, ratio } from '../format.ts';

/** p99 at the ramp's highest step over p99 at its first: a ratio already, judged against 'itself'. */
export const latencyCliff = defineMetric({
  id: 'latencyCliff',
  name: 'p99 past the knee',
  unit: 'x its low-load p99',
  means: 'in a ramp, the p99 at the highest rate offered over the p99 at the lowest: how steep the queueing cliff past the knee is.',
  better: 'lower',
  judged: 'itself',
  perTurn: false,
  read: (run) => run.ramp?.cliff,
  format: (v) => `${ratio(v)} its low-load p99`,
  detail: ({ ramp }) => {
    const last = ramp?.steps.at(-1);
    return ramp && last ? `p99 ${integer(ramp.lowLoadP99)} ms at ${integer(ramp.steps[0]!.offered)} req/s → ${integer(last.latency.p99)} ms at ${integer(last.offered)}` : '';
  },
  needs: (load) => (load.ramp ? undefined : 'latencyCliff needs a ramped load (load.ramp)'),
});
