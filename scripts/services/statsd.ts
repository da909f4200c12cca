// The StatsD service: a DNS server, a StatsD sink and an upstream HTTP API in one process of their own
// (statsd-server.ts), reset before each server run, and the helpers the correctness probes use to read
// the sink's counts, move the StatsD record and change what the upstream answers.
import { startServer, type RunningServer } from '../server-process.ts';
import { defineService, type Service, type StartedService } from '../service.ts';

export interface StatsdOptions {
  /** Each DNS answer leaves at least this long after its query arrived. */
  dnsLatencyMs?: number;
  /** At most this many DNS answers a second, oldest query first; 0 or absent: no limit. */
  dnsAnswersPerSecond?: number;
  /** The TTL of every record, in seconds (default 2). */
  ttlSeconds?: number;
  /** The upstream API's name (default upstream.hotpath.test). */
  upstreamName?: string;
  upstreamLatencyMs?: number;
  /** The upstream closes a connection after this many answers; 0 or absent: never. */
  upstreamRequestsPerConnection?: number;
  /** What the upstream answers, by path: GET <path> gets the JSON of routes[path], anything else a 404. */
  upstreamRoutes?: Record<string, unknown>;
  /**
   * One upstream path that changes while the service runs, as a registry changes under a live service:
   * every `everyMs` it gets the next of `documents`, round and round, except while a probe holds the
   * routes (`holdRoutes`). `answeredBetween` says which were current when.
   */
  upstreamChanges?: { path: string; everyMs: number; documents: unknown[] };
  /**
   * One upstream request in `every` at `path` answered with a document of its own, `document` with each
   * "{canary}" in it replaced by the canary's name (canary-1, canary-2, ...), at most `most` of them; none
   * while a probe holds the routes still. The names served are in `state().upstream.canaries`.
   */
  upstreamCanaries?: { path: string; every: number; most: number; document: unknown };
  port?: number;
}

/** One change of the upstream's routes: sent from here at `sent`, acknowledged at `acked` (Date.now()). */
interface Publication {
  sent: number;
  acked: number;
  routes: Record<string, unknown>;
}

/** How many changes are remembered: two and a half hours at one every 500 ms (07's), at least half that once it fills. */
const REMEMBERED = 18_000;

/** Metric lines the sink received since the server run began, by the address they were sent to and by name. */
export interface StatsdCounts {
  byAddress: Record<string, number>;
  byName: Record<string, number>;
  lines: number;
}

/**
 * Each metric's lines by shape, `<type>|<tags, sorted>` (`c|experiment:a,variant:b`): how many, their values'
 * sum (NaN if one was not a number), and how many carried a sample rate under 1 (`@0.1`).
 */
export type StatsdShapes = Record<string, Record<string, { lines: number; sum: number | null; sampled: number }>>;

export interface StatsdState {
  dns: { server: string; latencyMs: number; answersPerSecond: number; ttlSeconds: number; queries: number; duplicates: number; answered: number; waiting: number; waitingPeak: number };
  statsd: { name: string; port: number; addresses: string[]; record: string };
  upstream: { name: string; port: number; latencyMs: number; requestsPerConnection: number; requests: number; connections: number; canaries: string[] };
}

/** What a probe gets: where things are, and helpers on the running service. */
export interface StatsdContext {
  /** The DNS server, host:port, as the server gets it in DNS_SERVER. */
  dnsServer: string;
  statsdHost: string;
  statsdPort: number;
  /** The addresses the sink listens on; the StatsD record starts on the first. */
  sinkAddresses: string[];
  upstreamUrl: string;
  ttlSeconds: number;
  counts(): Promise<StatsdCounts>;
  /** What each metric's lines carried since the server run began: their type, tags and values. */
  shapes(): Promise<StatsdShapes>;
  /** How many lines named `name` the sink had received by each time given (ms since the epoch). */
  arrivedBy(name: string, times: number[]): Promise<number[]>;
  state(): Promise<StatsdState>;
  /** Points the StatsD name at another sink address; lookups answered from now on get it. */
  moveRecord(address: string): Promise<void>;
  /** Replaces what the upstream answers, by path. */
  setUpstreamRoutes(routes: Record<string, unknown>): Promise<void>;
  /**
   * Runs `probe` with the upstream's routes as the server run began and no `upstreamChanges` or canaries
   * meanwhile (a probe that changes them itself); they go on after it.
   */
  holdRoutes<T>(probe: () => Promise<T>): Promise<T>;
  /**
   * What the upstream may have answered at `path` at some moment from `from` to `to` (Date.now() times), in
   * the order they were current; undefined when `from` is before the changes remembered (REMEMBERED).
   */
  answeredBetween(path: string, from: number, to: number): unknown[] | undefined;
}

/**
 * A DNS server for names under hotpath.test (set latency, answers per second and TTL), a StatsD sink on
 * 127.0.0.1 and 127.0.0.2 counting metric lines per address, and an upstream HTTP API reached by name;
 * the server gets DNS_SERVER, STATSD_HOST, STATSD_PORT and UPSTREAM_URL.
 */
export function statsdService(options: StatsdOptions = {}): Service<StatsdContext> {
  return defineService({ name: 'StatsD service (DNS server, StatsD sink, upstream)', start: () => startStatsd(options) });
}

async function startStatsd(options: StatsdOptions): Promise<StartedService<StatsdContext>> {
  const server: RunningServer = await startServer(new URL('./statsd-server.ts', import.meta.url).pathname, {
    port: options.port,
    env: {
      DNS_LATENCY_MS: String(options.dnsLatencyMs ?? 0),
      DNS_ANSWERS_PER_SECOND: String(options.dnsAnswersPerSecond ?? 0),
      DNS_TTL_SECONDS: String(options.ttlSeconds ?? 2),
      UPSTREAM_LATENCY_MS: String(options.upstreamLatencyMs ?? 0),
      UPSTREAM_REQUESTS_PER_CONNECTION: String(options.upstreamRequestsPerConnection ?? 0),
      UPSTREAM_ROUTES: JSON.stringify(options.upstreamRoutes ?? {}),
      ...(options.upstreamName ? { UPSTREAM_NAME: options.upstreamName } : {}),
      ...(options.upstreamCanaries ? { UPSTREAM_CANARIES: JSON.stringify(options.upstreamCanaries) } : {}),
    },
  });
  const control = server.url;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${control}/_hotpath/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const json = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`the StatsD service's ${method} ${path} answered ${response.status}: ${json.error}`);
    return json;
  };
  const first = await call<StatsdState>('GET', 'state');
  const started = structuredClone(options.upstreamRoutes ?? {});
  // The upstream's routes as changed from here, each with when: the contract of an answer under load reads them.
  let publications: Publication[] = [];
  // From when the changes are all remembered: the run's first (its reset) stands for all before it.
  let rememberedFrom = -Infinity;
  let holds = 0;
  let publishing: Promise<void> = Promise.resolve();
  const publish = (change: () => Promise<void>, routes: Record<string, unknown>): Promise<void> => {
    const next = publishing.then(async () => {
      const sent = Date.now();
      await change();
      publications.push({ sent, acked: Date.now(), routes: structuredClone(routes) });
      if (publications.length > REMEMBERED) {
        publications = publications.slice(-REMEMBERED / 2);
        rememberedFrom = publications[0]!.sent;
      }
    });
    publishing = next.catch(() => undefined);
    return next;
  };
  const setRoutes = (routes: Record<string, unknown>) => publish(() => call('PUT', 'routes', routes).then(() => undefined), routes);
  let timer: NodeJS.Timeout | undefined;
  let turn = 0;
  const changes = options.upstreamChanges;
  const startChanges = () => {
    clearInterval(timer);
    if (!changes?.documents.length) return;
    turn = 0;
    timer = setInterval(() => {
      if (holds > 0) return;
      turn = (turn + 1) % changes.documents.length;
      const routes = { ...publications.at(-1)!.routes, [changes.path]: changes.documents[turn] };
      setRoutes(routes).catch(() => undefined);
    }, changes.everyMs);
    timer.unref();
  };
  const context: StatsdContext = {
    dnsServer: first.dns.server,
    statsdHost: first.statsd.name,
    statsdPort: first.statsd.port,
    sinkAddresses: first.statsd.addresses,
    upstreamUrl: `http://${first.upstream.name}:${first.upstream.port}`,
    ttlSeconds: first.dns.ttlSeconds,
    counts: () => call<StatsdCounts>('GET', 'counts'),
    shapes: () => call<StatsdShapes>('GET', 'shapes'),
    arrivedBy: async (name, times) =>
      (await call<{ arrived: number[] }>('POST', 'arrived', { name, by: times })).arrived,
    state: () => call<StatsdState>('GET', 'state'),
    moveRecord: async (address) => void (await call('POST', 'move', { address })),
    setUpstreamRoutes: setRoutes,
    holdRoutes: async (probe) => {
      holds += 1;
      try {
        if (options.upstreamCanaries) await call('PUT', 'canaries', { on: false });
        await setRoutes(started);
        return await probe();
      } finally {
        holds -= 1;
        if (options.upstreamCanaries && holds === 0) await call('PUT', 'canaries', { on: true });
      }
    },
    answeredBetween: (path, from, to) => {
      if (from < rememberedFrom) return undefined;
      // Each was current from when it was sent until the next one was acknowledged.
      const first = publications.findIndex((p, i) => (publications[i + 1]?.acked ?? Infinity) >= from);
      return publications.slice(first).filter((p, i) => i === 0 || p.sent <= to).map((p) => p.routes[path]);
    },
  };
  return {
    // Fresh state for the next server: counts at zero, the record back on the first address, the routes as set.
    async prepare() {
      await publish(() => call('POST', 'reset').then(() => undefined), started);
      publications = publications.slice(-1);
      rememberedFrom = -Infinity;
      startChanges();
      const env = {
        DNS_SERVER: context.dnsServer,
        STATSD_HOST: context.statsdHost,
        STATSD_PORT: String(context.statsdPort),
        UPSTREAM_URL: context.upstreamUrl,
      };
      return { env, context };
    },
    describe: () =>
      `DNS on ${context.dnsServer} (TTL ${context.ttlSeconds} s), StatsD sink ${context.statsdHost} on ${context.sinkAddresses.join(' and ')} port ${context.statsdPort}, ` +
      `upstream ${context.upstreamUrl}${changes ? ` (${changes.path} changes every ${changes.everyMs} ms)` : ''}, control at ${control}`,
    async stop() {
      clearInterval(timer);
      await server.stop();
    },
  };
}

/**
 * Waits until the sink has counted at least `expected` lines, or none has arrived for `quietMs`, or
 * `limitMs` has passed; returns the counts then.
 */
export async function waitForLines(
  context: StatsdContext,
  expected: number,
  options: { quietMs?: number; limitMs?: number } = {},
): Promise<{ counts: StatsdCounts; settled: boolean; waitedMs: number }> {
  const { quietMs = 2000, limitMs = 60_000 } = options;
  const started = Date.now();
  let counts = await context.counts();
  let lastChange = Date.now();
  while (counts.lines < expected && Date.now() - lastChange < quietMs && Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await context.counts();
    if (now.lines !== counts.lines) lastChange = Date.now();
    counts = now;
  }
  return { counts, settled: counts.lines >= expected || Date.now() - lastChange >= quietMs, waitedMs: Date.now() - started };
}
