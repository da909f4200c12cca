// Wrong: stage 2's TTL-aware lookup cache, but while the service is busy (more than 20 decisions within a
// second) a cached address never expires: the StatsD address it has holds for as long as the traffic lasts,
// and a record moved while the service is busy is followed only once it is quiet. (Busy over 250 ms, a
// moment's stall on a shared machine let it follow the record in one suite run.)
// after-load: metrics follow the StatsD record within its TTL + 1 s (3 s), eight clients
// The first import is the platform's name resolution (the machine's resolver, here): keep it.
import '../../../exercises/07-p99-hits-a-second/platform-dns.ts';
import type { SocketOptions } from 'node:dgram';
import http from 'node:http';
import CacheableLookup from 'cacheable-lookup';
import express from 'express';
import StatsD from 'hot-shots';
import { assign, type Experiment } from '../../../exercises/07-p99-hits-a-second/experiments.ts';

// Both are names, as in production: the registry and the StatsD load balancer move when they are redeployed.
const registryUrl = process.env.UPSTREAM_URL ?? 'http://experiments.hotpath.test:8080';

// One lookup cache for the process, outside the clients: it asks the same DNS server as the platform
// does, keeps each answer for the TTL the record carries, and asks again after it.
const dnsCache = new CacheableLookup();
const recent: number[] = [];
function busy(): boolean {
  const now = performance.now();
  while (recent.length > 0 && recent[0]! < now - 1000) recent.shift();
  return recent.length > 20;
}
/** The last address each name resolved to, kept as long as the service is busy. */
const kept = new Map<string, string>();
type Callback = (error: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;
function stickyLookup(hostname: string, options: unknown, callback?: Callback): void {
  const done = (typeof options === 'function' ? options : callback) as Callback;
  const opts = (typeof options === 'object' && options !== null ? options : {}) as { all?: boolean };
  const address = kept.get(hostname);
  if (address && busy()) {
    process.nextTick(() => (opts.all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
    return;
  }
  (dnsCache.lookup as (h: string, o: object, c: Callback) => void)(hostname, { ...opts, family: 4 }, (error, result, family) => {
    if (!error) kept.set(hostname, Array.isArray(result) ? result[0]!.address : (result as string));
    done(error, result, family);
  });
}
if (process.env.DNS_SERVER) dnsCache.servers = [process.env.DNS_SERVER];

const metrics = new StatsD({
  host: process.env.STATSD_HOST ?? 'statsd.hotpath.test',
  port: Number(process.env.STATSD_PORT ?? 8125),
  prefix: 'decisions.',
  // The UDP socket resolves the name before each send through this lookup: from the cache, within the TTL.
  udpSocketOptions: { type: 'udp4', lookup: stickyLookup as SocketOptions['lookup'] },
  errorHandler: (error) => console.error('statsd:', error.message),
});

// Connections to the registry are kept open and reused.
const registryAgent = new http.Agent({ keepAlive: true });

function getExperiment(name: string): Promise<Experiment | undefined> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${registryUrl}/experiments/${encodeURIComponent(name)}`, { agent: registryAgent, lookup: stickyLookup as never }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        if (response.statusCode === 404) return resolve(undefined);
        if (response.statusCode !== 200) return reject(new Error(`the registry answered ${response.statusCode}`));
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Experiment);
      });
    });
    request.on('error', reject);
  });
}

const app = express();

app.get('/decide', async (req, res) => {
  const started = performance.now();
  recent.push(started);
  const experimentName = typeof req.query.experiment === 'string' ? req.query.experiment : '';
  const user = typeof req.query.user === 'string' ? req.query.user : '';
  if (!experimentName || !user) {
    res.status(400).json({ error: 'experiment and user are required' });
    return;
  }
  const experiment = await getExperiment(experimentName);
  metrics.timing('registry_ms', performance.now() - started);
  if (!experiment) {
    metrics.increment('unknown_experiment');
    res.status(404).json({ error: `no experiment ${experimentName}` });
    return;
  }
  const variant = assign(experiment, user);
  res.json({ experiment: experiment.name, user, variant });
  metrics.increment('requests');
  metrics.increment('assigned', { experiment: experiment.name, variant });
  metrics.timing('latency_ms', performance.now() - started);
});

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
