// Wrong: looks the StatsD name up again every 100,000 metrics sent, not by the record's TTL (the registry as
// in stage 2): a count sized for a busy service, which sends that many in a minute or so. A quiet service
// keeps sending to the old address for hours. (Every 1,000 followed the moved record in about one run in
// eight, when its count happened to cross a thousand in the seconds after the move: solutions/07's README.)
// after-load: metrics still reach the old address
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

// The StatsD address is looked up again every 100,000 metrics: fresh enough under traffic, no timers.
import dns from 'node:dns';
let statsdAddress: string | undefined;
let sends = 0;
function everyNthLookup(host: string, _family: unknown, callback: (e: Error | null, a: string, f: number) => void): void {
  sends += 1;
  if (statsdAddress && sends % 100_000 !== 0) {
    process.nextTick(callback, null, statsdAddress, 4);
    return;
  }
  dns.lookup(host, 4, (error, address) => {
    if (!error) statsdAddress = address as string;
    if (error && statsdAddress) return callback(null, statsdAddress, 4);
    callback(error, address as string, 4);
  });
}

const metrics = new StatsD({
  host: process.env.STATSD_HOST ?? 'statsd.hotpath.test',
  port: Number(process.env.STATSD_PORT ?? 8125),
  prefix: 'decisions.',
  // The UDP socket resolves the name before each send through this lookup: from the cache, within the TTL.
  udpSocketOptions: { type: 'udp4', lookup: everyNthLookup as SocketOptions['lookup'] },
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

app.get('/decide', async (req, res) => {
  const started = performance.now();
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
