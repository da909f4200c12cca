// Exercise 07's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/07-p99-hits-a-second/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { latencyP99 } from '../../scripts/metrics/latency-p99.ts';
import { pendingLookups } from '../../scripts/metrics/pending-lookups.ts';

export default defineSolution({
  stages: [
    {
      file: '1-client-dns-cache.ts',
      title: "the StatsD client's own DNS cache",
      changes:
        "hot-shots caches the StatsD address itself (`cacheDns: true`, for an hour), so the name is looked up once instead of for every metric; the cache ignores the record's TTL, so this stage is wrong on purpose.",
      // Fast but wrong: held to "fast" loosely, so one slow round of a stage shown for its rejection does not
      // keep every server in turns for three more rounds (see the solution's README).
      targets: [
        { metric: latencyP99, against: 'broken', atMost: 0.3 },
        { metric: pendingLookups, against: 'broken', atMost: 0.05 },
      ],
      expectedToFail: {
        why: 'Fast, and what the StatsD client offers; but its cache ignores the record\'s TTL, so metrics do not follow a moved StatsD record.',
        problem: 'still reach the old address',
      },
    },
    {
      file: '2-ttl-aware-dns-cache.ts',
      title: 'a lookup cache that honours the TTL',
      changes:
        "One cacheable-lookup for the process, asking the platform's DNS server and keeping each answer for its TTL, is given to the StatsD client's UDP socket (`udpSocketOptions.lookup`) and to the registry's HTTP agent (`install`).",
      targets: [
        { metric: latencyP99, against: 'broken', atMost: 0.25 },
        { metric: pendingLookups, against: 'broken', atMost: 0.05 },
      ],
    },
  ],
  profile: {
    lookFor:
      "Read what is missing: over half of the samples, up to three quarters, are `(idle)` while p99 is a second, so requests wait on something other than the CPU. Search for `sendStat`: hot-shots' `Client.sendStat` runs for every metric, four per request, a few percent of the samples; what each send starts and waits for does not show as CPU. A profile shows work being started, not the wait; the probe's async resources in flight (`run 07 --load`) count what is waiting, by type.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "(idle)", atLeast: 0.5 },
      { name: "Client.sendStat", atLeast: 0.015 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'waiting', final: ['cpu-bound', 'one-core'],
    why: "no longer waiting on lookups, the service answers several times more decisions under the load's 30 connections and keeps its one core busy; its loop delay p99 sits near the doctor's 15 ms for cpu-bound, over it where the machine is slower (figures in docs/doctor.md)" },
  hints: [
    'CPU, memory and open sockets look normal: `npm run workshop -- run 07 --load` shows under a hundred TCP sockets for 30 connections and a registry. Read the last column of the runtime figures instead, the async resources in flight: which type runs into the thousands, and what does it stand for?',
    'QUERYWRAP is a DNS query in flight (c-ares; with getaddrinfo it would be a GetAddrInfoReqWrap, Klarna\'s UV_GETADDRINFO). Count the names this service resolves and how often it resolves each: per decision, how many lookups does it start?',
    'Watch the StatsD client: start the service with `NODE_DEBUG=hot-shots npm run workshop -- run 07` and send one `curl`. How many sends does one decision make, and is each one addressed to an IP address or to a name? Then do the arithmetic against a DNS server that answers 1,000 lookups a second.',
    "hot-shots sends every metric to a hostname, and a UDP send to a hostname looks the name up first, every time: four lookups per decision, more than the DNS server can answer at this load. Nothing awaits a metric, so why does a request wait? Follow the registry call: its load balancer closes a connection after 10 requests, and the new connection looks up `experiments.hotpath.test` at the back of the same queue.",
    "Cache the lookups outside the clients, for the TTL the record carries: cacheable-lookup (installed) asked of the DNS server in DNS_SERVER, given to the StatsD client's UDP socket (`udpSocketOptions: { lookup }`) and installed on the registry's HTTP agent. hot-shots' own `cacheDns` is fast too, but keeps an address for 60 s whatever the TTL: the after-load check moves the StatsD record and watches where the metrics go.",
  ],
});
