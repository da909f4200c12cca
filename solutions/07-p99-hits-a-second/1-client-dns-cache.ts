// Exercise 07, stage 1: the StatsD client's own DNS cache.
// Why and what it measured: solutions/07-p99-hits-a-second/README.md.
// The first import is the platform's name resolution (the machine's resolver, here): keep it.
import '../../exercises/07-p99-hits-a-second/platform-dns.ts';
import http from 'node:http';
import express from 'express';
import StatsD from 'hot-shots';
import { assign, type Experiment } from '../../exercises/07-p99-hits-a-second/experiments.ts';

// Both are names, as in production: the registry and the StatsD load balancer move when they are redeployed.
const registryUrl = process.env.UPSTREAM_URL ?? 'http://experiments.hotpath.test:8080';
const metrics = new StatsD({
  host: process.env.STATSD_HOST ?? 'statsd.hotpath.test',
  port: Number(process.env.STATSD_PORT ?? 8125),
  prefix: 'decisions.',
  // hot-shots' own DNS cache: the first lookup's address is kept for cacheDnsTtl, whatever TTL the
  // record has. An hour, as good as forever here (the client Klarna used kept it forever): the default
  // 60 s could run out just before the after-load check moves the record, and hide the flaw.
  cacheDns: true,
  cacheDnsTtl: 3_600_000,
  errorHandler: (error) => console.error('statsd:', error.message),
});

// Connections to the registry are kept open and reused.
const registryAgent = new http.Agent({ keepAlive: true });

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
