// The StatsD service, run in its own process by the harness like any server. It holds three real network
// servers and a control API:
// - a DNS server (dns2, UDP, 127.0.0.1) authoritative for a few names under hotpath.test: the StatsD
//   host and an upstream API's host. Every answer carries DNS_TTL_SECONDS and leaves at least
//   DNS_LATENCY_MS after its query arrived; at most DNS_ANSWERS_PER_SECOND leave per second, in the order
//   the queries came, so lookups asked faster than that queue, as getaddrinfo calls queue for libuv's few
//   threads.
// - a StatsD sink: UDP on 127.0.0.1 and 127.0.0.2 (same port; all of 127/8 is loopback on Linux) that
//   counts metric lines per address and per metric name, and each name's lines by type and tags. The StatsD record can be moved from one address
//   to the other, as when a StatsD load balancer is redeployed with a new IP.
// - an upstream HTTP API on 127.0.0.1 that answers the JSON set for each path after UPSTREAM_LATENCY_MS,
//   and closes each connection after UPSTREAM_REQUESTS_PER_CONNECTION answers, as load balancers do, so
//   its clients open new connections (and look its name up) now and then. With UPSTREAM_CANARIES, one
//   request in `every` at its path gets a document of its own instead (a canary: "{canary}" in it becomes
//   canary-1, canary-2, ...), at most `most` of them, so what a client does with the answer to its own
//   request can be traced; the names served are in the state.
// The control API listens last, on PORT: its listening means everything is ready.
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';
import { countAtMost } from '../stats.ts';

const { Packet } = dns2;

const port = Number(process.env.PORT ?? 0);
const latencyMs = Number(process.env.DNS_LATENCY_MS ?? 0);
const answersPerSecond = Number(process.env.DNS_ANSWERS_PER_SECOND ?? 0); // 0: no limit
const ttlSeconds = Number(process.env.DNS_TTL_SECONDS ?? 2);
const upstreamLatencyMs = Number(process.env.UPSTREAM_LATENCY_MS ?? 0);
const upstreamRequestsPerConnection = Number(process.env.UPSTREAM_REQUESTS_PER_CONNECTION ?? 0); // 0: no limit
const statsdName = process.env.STATSD_NAME ?? 'statsd.hotpath.test';
const upstreamName = process.env.UPSTREAM_NAME ?? 'upstream.hotpath.test';
const defaultRoutes = JSON.parse(process.env.UPSTREAM_ROUTES ?? '{}') as Record<string, unknown>;
const canaries = JSON.parse(process.env.UPSTREAM_CANARIES ?? 'null') as { path: string; every: number; most: number; document: unknown } | null;

const SINK_ADDRESSES = ['127.0.0.1', '127.0.0.2'] as const;

// ---- state, reset before each server run ----------------------------------------------------------
const records = new Map<string, string>();
let routes: Record<string, unknown> = {};
const counts = { byAddress: {} as Record<string, number>, byName: {} as Record<string, number>, lines: 0 };
const dnsStats = { queries: 0, duplicates: 0, answered: 0, waitingPeak: 0 };
const upstreamStats = { requests: 0, connections: 0 };
/** Canaries: off while a probe holds the routes still; `asked` counts requests at their path, `served` names those answered. */
const canaryStats = { on: true, asked: 0, served: [] as string[] };
const MAX_NAMES = 1000;
/**
 * What the lines of each name carried, by their type and tags (`ms|experiment:a,variant:b`, tags sorted):
 * how many, the sum of their values (NaN once one is not a number), and how many carried a sample rate
 * under 1. Kept for the first MAX_SHAPES of each name (room for a tag per canary); a line past them counts
 * under `other`.
 */
const shapes = new Map<string, Map<string, { lines: number; sum: number; sampled: number }>>();
const MAX_SHAPES = 1000;
/** When each counted line arrived (Date.now()), by name, in arrival order: to count them by a time. */
const arrivals = new Map<string, number[]>();
/** DNS queries waiting for their answer, oldest first from `head`; `held` finds one by client, id and question. */
let waiting: Waiting[] = [];
let head = 0;
const held = new Map<string, Waiting>();

function reset(): void {
  records.set(statsdName, SINK_ADDRESSES[0]);
  records.set(upstreamName, '127.0.0.1');
  routes = structuredClone(defaultRoutes);
  counts.byAddress = Object.fromEntries(SINK_ADDRESSES.map((a) => [a, 0]));
  counts.byName = {};
  counts.lines = 0;
  arrivals.clear();
  shapes.clear();
  Object.assign(dnsStats, { queries: 0, duplicates: 0, answered: 0, waitingPeak: 0 });
  Object.assign(upstreamStats, { requests: 0, connections: 0 });
  Object.assign(canaryStats, { on: true, asked: 0, served: [] });
  // The last server's unanswered queries go: the next one must not wait behind them.
  waiting = [];
  head = 0;
  held.clear();
}
reset();

// ---- DNS ---------------------------------------------------------------------------------------------
interface Waiting {
  request: dns2.Packet;
  /** Where the answer goes: the latest port the query came from (a resend comes from a new socket). */
  client: { address: string; port: number };
  due: number;
  key: string;
}
let timer: NodeJS.Timeout | undefined;
let lastRelease = performance.now();
let credit = 0;

function answer(entry: Waiting): void {
  held.delete(entry.key);
  const { request, client } = entry;
  const response = Packet.createResponseFromRequest(request);
  response.header.aa = 1;
  const [question] = request.questions;
  const name = question?.name.toLowerCase().replace(/\.$/, '') ?? '';
  const address = records.get(name);
  if (!address) response.header.rcode = 3; // NXDOMAIN
  // A known name with no AAAA record: NOERROR and no answer (NODATA), as a real zone says.
  else if (question!.type === Packet.TYPE.A) {
    response.answers.push({ name: question!.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: ttlSeconds, address } as dns2.Packet.Resource);
  }
  dnsStats.answered += 1;
  dnsServer.send(response.toBuffer(), client.port, client.address); // UDP: if the asker is gone, no one to tell
}

// Answers every query whose latency has passed, at most answersPerSecond of them per second, oldest first.
function release(): void {
  timer = undefined;
  const now = performance.now();
  if (answersPerSecond > 0) {
    credit = Math.min(credit + ((now - lastRelease) / 1000) * answersPerSecond, Math.max(1, answersPerSecond / 100));
  }
  lastRelease = now;
  while (head < waiting.length && waiting[head]!.due <= now && (answersPerSecond <= 0 || credit >= 1)) {
    answer(waiting[head]!);
    waiting[head++] = undefined as unknown as Waiting;
    credit -= 1;
  }
  if (head > 4096 && head * 2 > waiting.length) {
    waiting = waiting.slice(head);
    head = 0;
  }
  schedule();
}

function schedule(): void {
  if (timer || head >= waiting.length) return;
  const wait = Math.max(0, waiting[head]!.due - performance.now());
  // When the rate is what holds answers back, come back in a millisecond for the next ones.
  timer = setTimeout(release, answersPerSecond > 0 ? Math.max(1, wait) : wait);
}

// A resolver that has not heard back in time resends the query: same id and question, from a new socket
// (c-ares closes the old one). While the first is still waiting here the resend joins it (`held`), as DNS
// servers fold duplicates, and the answer goes to the newest socket. Without this, every resend would
// queue again and take an answer's place.
const dnsServer = dns2.createUDPServer((request, _send, from) => {
  dnsStats.queries += 1;
  const client = { address: (from as AddressInfo).address, port: (from as AddressInfo).port };
  const key = `${client.address}:${request.header.id}:${request.questions[0]?.type}:${request.questions[0]?.name.toLowerCase()}`;
  const earlier = held.get(key);
  if (earlier) {
    dnsStats.duplicates += 1;
    earlier.client = client;
    return;
  }
  const entry: Waiting = { request, client, due: performance.now() + latencyMs, key };
  held.set(key, entry);
  waiting.push(entry);
  dnsStats.waitingPeak = Math.max(dnsStats.waitingPeak, waiting.length - head);
  if (!timer) lastRelease = performance.now();
  schedule();
});
dnsServer.on('requestError', () => {}); // a malformed packet is not a reason to stop
await dnsServer.listen(0, '127.0.0.1');
dnsServer.setRecvBufferSize(4 * 1024 * 1024);
const dnsPort = (dnsServer.address() as AddressInfo).port;

// ---- StatsD sink -------------------------------------------------------------------------------------
function count(address: string, message: Buffer): void {
  const now = Date.now();
  for (const line of message.toString('utf8').split('\n')) {
    if (!line) continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : line;
    counts.lines += 1;
    counts.byAddress[address] = (counts.byAddress[address] ?? 0) + 1;
    if (name in counts.byName || Object.keys(counts.byName).length < MAX_NAMES) {
      counts.byName[name] = (counts.byName[name] ?? 0) + 1;
      let times = arrivals.get(name);
      if (!times) arrivals.set(name, (times = []));
      times.push(now);
      tally(name, colon > 0 ? line.slice(colon + 1) : '');
    }
  }
}

/** Counts a line's shape: `value|type[|@rate][|#tag,...]`, as StatsD and DogStatsD clients send it. */
function tally(name: string, rest: string): void {
  const [value = '', type = '', ...fields] = rest.split('|');
  const tags = fields.find((field) => field.startsWith('#'))?.slice(1).split(',').sort().join(',') ?? '';
  let byShape = shapes.get(name);
  if (!byShape) shapes.set(name, (byShape = new Map()));
  const key = byShape.size < MAX_SHAPES || byShape.has(`${type}|${tags}`) ? `${type}|${tags}` : 'other';
  const shape = byShape.get(key) ?? { lines: 0, sum: 0, sampled: 0 };
  shape.lines += 1;
  shape.sum += value.trim() === '' ? NaN : Number(value);
  // A sample rate under 1 (`@0.1`): StatsD scales the line up, so it stands for more than one event.
  const rate = fields.find((field) => field.startsWith('@'));
  if (rate !== undefined && !(Number(rate.slice(1)) >= 1)) shape.sampled += 1;
  byShape.set(key, shape);
}

/** How many lines named `name` had arrived by `time`: the arrival times are in order. */
function arrivedBy(name: string, time: number): number {
  return countAtMost(arrivals.get(name) ?? [], time);
}

async function bindSink(address: string, sinkPort: number): Promise<dgram.Socket> {
  // A big receive buffer (as far as net.core.rmem_max allows) so a busy moment in this process does not
  // drop packets the load sent: a lost line must mean the server never sent it.
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  socket.on('message', (message) => count(address, message));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(sinkPort, address, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return socket;
}

// The same port on both addresses: a free port on the first may be taken on the second, so try a few.
async function bindSinks(): Promise<{ port: number; sockets: dgram.Socket[] }> {
  for (let attempt = 1; ; attempt++) {
    const first = await bindSink(SINK_ADDRESSES[0], 0);
    const sinkPort = first.address().port;
    try {
      const others = await Promise.all(SINK_ADDRESSES.slice(1).map((a) => bindSink(a, sinkPort)));
      return { port: sinkPort, sockets: [first, ...others] };
    } catch (error) {
      first.close();
      if (attempt >= 5) throw error;
    }
  }
}
const sink = await bindSinks();

// ---- upstream API ------------------------------------------------------------------------------------
const upstream = http.createServer((req, res) => {
  upstreamStats.requests += 1;
  const path = (req.url ?? '/').split('?')[0]!;
  const canary = canaries && path === canaries.path && canaryStats.on && canaryStats.served.length < canaries.most && ++canaryStats.asked % canaries.every === 0;
  const body = canary ? undefined : routes[path];
  setTimeout(() => {
    if (canary) {
      // Named as it leaves, so every name served went out in an answer.
      const name = `canary-${canaryStats.served.length + 1}`;
      canaryStats.served.push(name);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(canaries.document).replaceAll('{canary}', name));
      return;
    }
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no such path' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }, upstreamLatencyMs);
});
upstream.on('connection', () => (upstreamStats.connections += 1));
// After this many answers on a connection the server says `Connection: close`, and the client opens a new one.
if (upstreamRequestsPerConnection > 0) upstream.maxRequestsPerSocket = upstreamRequestsPerConnection;
upstream.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamPort = (upstream.address() as AddressInfo).port;

// ---- control API -------------------------------------------------------------------------------------
async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

function state() {
  return {
    dns: { server: `127.0.0.1:${dnsPort}`, latencyMs, answersPerSecond, ttlSeconds, ...dnsStats, waiting: waiting.length - head },
    statsd: { name: statsdName, port: sink.port, addresses: [...SINK_ADDRESSES], record: records.get(statsdName) },
    upstream: {
      name: upstreamName,
      port: upstreamPort,
      latencyMs: upstreamLatencyMs,
      requestsPerConnection: upstreamRequestsPerConnection,
      ...upstreamStats,
      canaries: canaryStats.served,
    },
  };
}

const control = http.createServer(async (req, res) => {
  const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  try {
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    if (route === 'GET /_hotpath/state') return reply(200, state());
    if (route === 'GET /_hotpath/counts') return reply(200, counts);
    if (route === 'GET /_hotpath/shapes') {
      return reply(200, Object.fromEntries([...shapes].map(([name, byShape]) => [name, Object.fromEntries(byShape)])));
    }
    if (route === 'POST /_hotpath/arrived') {
      const { name, by } = (await readJson(req)) as { name?: unknown; by?: unknown };
      if (typeof name !== 'string' || !Array.isArray(by) || !by.every((t) => Number.isFinite(t))) {
        return reply(400, { error: 'POST /_hotpath/arrived takes { name: <metric>, by: [<ms since the epoch>, ...] }' });
      }
      return reply(200, { name, arrived: (by as number[]).map((time) => arrivedBy(name, time)) });
    }
    if (route === 'POST /_hotpath/reset') {
      reset();
      return reply(200, state());
    }
    if (route === 'POST /_hotpath/move') {
      const { address } = (await readJson(req)) as { address?: string };
      if (!address || !(SINK_ADDRESSES as readonly string[]).includes(address)) return reply(400, { error: `address must be one of ${SINK_ADDRESSES.join(', ')}` });
      records.set(statsdName, address);
      return reply(200, state());
    }
    if (route === 'PUT /_hotpath/canaries') {
      const { on } = (await readJson(req)) as { on?: unknown };
      if (typeof on !== 'boolean') return reply(400, { error: 'PUT /_hotpath/canaries takes { on: true | false }' });
      canaryStats.on = on;
      return reply(200, state());
    }
    if (route === 'PUT /_hotpath/routes') {
      routes = (await readJson(req)) as Record<string, unknown>;
      return reply(200, state());
    }
    reply(404, { error: `no control route ${route}` });
  } catch (error) {
    reply(400, { error: String(error) });
  }
});
control.listen(port, '127.0.0.1', () =>
  process.stdout.write(
    `DNS on 127.0.0.1:${dnsPort} (latency ${latencyMs} ms, ${answersPerSecond || 'unlimited'} answers/s, TTL ${ttlSeconds} s), ` +
      `StatsD sink on ${SINK_ADDRESSES.join(', ')}:${sink.port}, upstream on 127.0.0.1:${upstreamPort}\n`,
  ),
);

process.on('SIGTERM', () => {
  if (timer) clearTimeout(timer);
  dnsServer.close();
  for (const socket of sink.sockets) socket.close();
  upstream.closeAllConnections();
  upstream.close();
  control.closeAllConnections();
  control.close(() => process.exit(0));
});
