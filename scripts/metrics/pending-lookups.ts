import { defineMetric } from '../metric.ts';
import { integer } from '../format.ts';

/** Read from the probe's async_hooks counts: the manifest sets `probe: { asyncResources: true }`. */
export const pendingLookups = defineMetric({
  id: 'pendingLookups',
  name: 'pending lookups (peak)',
  unit: 'lookups',
  means: 'the most DNS lookups in flight at once (c-ares queries and getaddrinfo requests, from async_hooks): a queue of them is work waiting on the resolver.',
  better: 'lower',
  judged: 'reference',
  perTurn: true,
  read: (run) => {
    const peak = run.runtime?.pendingPeak;
    return peak ? (peak.QUERYWRAP ?? 0) + (peak.GETADDRINFOREQWRAP ?? 0) : undefined;
  },
  format: (v) => `${integer(v)} lookups`,
});
