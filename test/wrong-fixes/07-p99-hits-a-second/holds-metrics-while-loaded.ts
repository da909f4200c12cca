// Wrong: while one user was asked about more than 20 times in the last 2 s, it keeps every metric in memory and
// sends them all once the traffic has calmed down: no metric is lost, but the dashboards see nothing while the
// service is busy, and under steady traffic the pile only grows.
// after-load: line at the sink 3 s later
// measured-seconds: 6
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
if (process.env.DNS_SERVER) dnsCache.servers = [process.env.DNS_SERVER];

const client = new StatsD({
  host: process.env.STATSD_HOST ?? 'statsd.hotpath.test',
  port: Number(process.env.STATSD_PORT ?? 8125),
  prefix: 'decisions.',
  maxBufferSize: 8192,
  bufferFlushInterval: 50,
  // The UDP socket resolves the name before each send through this lookup: from the cache, within the TTL.
  udpSocketOptions: { type: 'udp4', lookup: dnsCache.lookup as SocketOptions['lookup'] },
  errorHandler: (error) => console.error('statsd:', error.message),
});

// While loaded (one user asked about more than 20 times in the last 2 s: a scheduler's retries, or a load
// test) the metrics wait in memory; they go out, all of them, once the traffic has calmed down: the busy
// moments spend no time on UDP sends.
const arrivals: Array<{ at: number; user: string }> = [];
const perUser = new Map<string, number>();
function arrived(user: string): void {
  arrivals.push({ at: performance.now(), user });
  perUser.set(user, (perUser.get(user) ?? 0) + 1);
}
function loaded(): boolean {
  const now = performance.now();
  while (arrivals.length > 0 && arrivals[0]!.at < now - 2000) {
    const { user } = arrivals.shift()!;
    const left = perUser.get(user)! - 1;
    if (left > 0) perUser.set(user, left);
    else perUser.delete(user);
  }
  for (const count of perUser.values()) if (count > 20) return true;
  return false;
}
type Call = () => void;
let deferred: Call[] = [];
const metrics = {
  timing: (name: string, value: number) => (loaded() ? deferred.push(() => client.timing(name, value)) : client.timing(name, value)),
  increment: (name: string, tags?: Record<string, string>) =>
    loaded() ? deferred.push(() => client.increment(name, 1, tags)) : client.increment(name, 1, tags),
};
function flush(): void {
  if (deferred.length === 0 || loaded()) return;
  const batch = deferred.splice(0, 4000);
  for (const call of batch) call();
  if (deferred.length > 0) setImmediate(flush);
}
setInterval(flush, 100).unref();

// Connections to the registry are kept open and reused.
const registryAgent = new http.Agent({ keepAlive: true });
// New connections to the registry look its name up in the same cache.
dnsCache.install(registryAgent);

function getExperiment(name: string): Promise<Experiment | undefined> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${registryUrl}/experiments/${encodeURIComponent(name)}`, { agent: registryAgent }, (response) => {
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
  const experimentName = typeof req.query.experiment === 'string' ? req.query.experiment : '';
  const user = typeof req.query.user === 'string' ? req.query.user : '';
  arrived(user);
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
