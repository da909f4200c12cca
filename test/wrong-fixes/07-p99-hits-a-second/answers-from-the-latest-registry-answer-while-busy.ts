// Wrong: stage 2, but while busy (more than 10 decisions within 250 ms) a decision answers at once from the
// registry's latest answer to any decision (at most 25 ms old), and still sends a registry request of its
// own, which it does not wait for and whose answer it does not read: the registry counts one request per
// decision, the metrics go out when that request is answered, timed to it. When it is quiet, every decision
// waits for its own answer.
// after-load: one-off allocations, each in the answer to one request
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
if (process.env.DNS_SERVER) dnsCache.servers = [process.env.DNS_SERVER];

const metrics = new StatsD({
  host: process.env.STATSD_HOST ?? 'statsd.hotpath.test',
  port: Number(process.env.STATSD_PORT ?? 8125),
  prefix: 'decisions.',
  // The UDP socket resolves the name before each send through this lookup: from the cache, within the TTL.
  udpSocketOptions: { type: 'udp4', lookup: dnsCache.lookup as SocketOptions['lookup'] },
  errorHandler: (error) => console.error('statsd:', error.message),
});

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
const recent: number[] = [];
function busy(): boolean {
  const now = performance.now();
  recent.push(now);
  while (recent.length > 0 && recent[0]! < now - 250) recent.shift();
  return recent.length > 10;
}
/** The registry's latest answer for each experiment, and when it came. */
const latest = new Map<string, { experiment: Experiment; at: number }>();
function readRegistry(name: string): Promise<Experiment | undefined> {
  return getExperiment(name).then((experiment) => {
    if (experiment) latest.set(name, { experiment, at: performance.now() });
    return experiment;
  });
}

app.get('/decide', async (req, res) => {
  const started = performance.now();
  const experimentName = typeof req.query.experiment === 'string' ? req.query.experiment : '';
  const user = typeof req.query.user === 'string' ? req.query.user : '';
  if (!experimentName || !user) {
    res.status(400).json({ error: 'experiment and user are required' });
    return;
  }
  const loaded = busy();
  const own = readRegistry(experimentName);
  const shared = latest.get(experimentName);
  if (loaded && shared && performance.now() - shared.at < 25) {
    const variant = assign(shared.experiment, user);
    res.json({ experiment: shared.experiment.name, user, variant });
    own.then(
      () => {
        metrics.timing('registry_ms', performance.now() - started);
        metrics.increment('requests');
        metrics.increment('assigned', { experiment: shared.experiment.name, variant });
        metrics.timing('latency_ms', performance.now() - started);
      },
      () => {},
    );
    return;
  }
  const experiment = await own;
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
