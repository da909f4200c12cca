import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import dns2, { Packet } from 'dns2';
import { describe, expect, it } from 'vitest';
import { isPortFree, liveServerCount } from '../scripts/server-process.ts';
import { startServices } from '../scripts/services/index.ts';
import { statsdService, waitForLines } from '../scripts/services/statsd.ts';

function resolverFor(server: string): dns.promises.Resolver {
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 3 });
  resolver.setServers([server]);
  return resolver;
}

async function sendLines(address: string, port: number, payload: string): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => socket.send(payload, port, address, (error) => (error ? reject(error) : resolve())));
  socket.close();
}

/** GET through a keep-alive agent; says whether the server asked to close the connection. */
function get(url: string, agent: http.Agent): Promise<{ status: number; body: string; close: boolean }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, lookup: (_host, _options, callback) => callback(null, '127.0.0.1', 4) }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body, close: response.headers.connection === 'close' }));
      })
      .on('error', reject);
  });
}

describe('statsd service', () => {
  it('answers A records with the TTL, counts metric lines per address, moves the record, serves the upstream, and resets per server', async () => {
    const before = liveServerCount();
    const wanted = statsdService({ ttlSeconds: 7, upstreamName: 'experiments.hotpath.test', upstreamRequestsPerConnection: 2, upstreamRoutes: { '/a': { ok: 1 } } });
    const services = await startServices([wanted]);
    let ports: number[] = [];
    try {
      const prepared = await services.prepare();
      const statsd = prepared.contexts.get(wanted)!;
      expect(prepared.env).toMatchObject({ DNS_SERVER: statsd.dnsServer, STATSD_HOST: 'statsd.hotpath.test', STATSD_PORT: String(statsd.statsdPort) });
      expect(prepared.env.UPSTREAM_URL).toMatch(/^http:\/\/experiments\.hotpath\.test:\d+$/);
      expect(statsd.sinkAddresses).toEqual(['127.0.0.1', '127.0.0.2']);
      expect(services.describe()[0]).toContain('StatsD sink');

      // DNS: the A record with its TTL, no AAAA record (NODATA), and NXDOMAIN for names outside the zone.
      const resolver = resolverFor(statsd.dnsServer);
      expect(await resolver.resolve4('statsd.hotpath.test', { ttl: true })).toEqual([{ address: '127.0.0.1', ttl: 7 }]);
      expect(await resolver.resolve4('experiments.hotpath.test')).toEqual(['127.0.0.1']);
      await expect(resolver.resolve6('statsd.hotpath.test')).rejects.toMatchObject({ code: 'ENODATA' });
      await expect(resolver.resolve4('nowhere.hotpath.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });

      // The sink counts lines, not packets, per address and per metric name.
      await sendLines('127.0.0.1', statsd.statsdPort, 'decisions.requests:1|c\ndecisions.latency_ms:3|ms');
      await sendLines('127.0.0.2', statsd.statsdPort, 'decisions.requests:1|c|#variant:green');
      const { counts } = await waitForLines(statsd, 3, { quietMs: 1000, limitMs: 5000 });
      expect(counts).toEqual({ byAddress: { '127.0.0.1': 2, '127.0.0.2': 1 }, byName: { 'decisions.requests': 2, 'decisions.latency_ms': 1 }, lines: 3 });

      // Moving the record: the next answer carries the new address; only sink addresses are accepted.
      await statsd.moveRecord('127.0.0.2');
      expect(await resolver.resolve4('statsd.hotpath.test')).toEqual(['127.0.0.2']);
      expect((await statsd.state()).statsd.record).toBe('127.0.0.2');
      await expect(statsd.moveRecord('10.0.0.1')).rejects.toThrow(/answered 400/);

      // The upstream serves the routes, 404 elsewhere, and asks to close a connection after 2 answers.
      const agent = new http.Agent({ keepAlive: true });
      const upstream = prepared.env.UPSTREAM_URL!.replace('experiments.hotpath.test', '127.0.0.1');
      const first = await get(`${upstream}/a`, agent);
      const second = await get(`${upstream}/a`, agent);
      expect(first).toEqual({ status: 200, body: '{"ok":1}', close: false });
      expect(second.close).toBe(true);
      expect((await get(`${upstream}/b`, agent)).status).toBe(404);
      await statsd.setUpstreamRoutes({ '/b': [2] });
      expect((await get(`${upstream}/b`, agent)).body).toBe('[2]');
      agent.destroy();

      // The next server starts from scratch: counts at zero, the record back, the routes as configured.
      const next = await services.prepare();
      const fresh = next.contexts.get(wanted)!;
      expect(await fresh.counts()).toEqual({ byAddress: { '127.0.0.1': 0, '127.0.0.2': 0 }, byName: {}, lines: 0 });
      expect(await resolver.resolve4('statsd.hotpath.test')).toEqual(['127.0.0.1']);
      expect((await get(`${upstream}/a`, new http.Agent())).status).toBe(200);
      const state = await fresh.state();
      ports = [state.upstream.port, state.statsd.port];
    } finally {
      await services.stop();
    }
    expect(liveServerCount()).toBe(before);
    // The upstream's TCP port and the sink's UDP port on both addresses are free again.
    expect(await isPortFree(ports[0]!)).toBe(true);
    for (const address of ['127.0.0.1', '127.0.0.2']) {
      const socket = dgram.createSocket('udp4');
      await new Promise<void>((resolve, reject) => socket.once('error', reject).bind(ports[1], address, resolve));
      socket.close();
    }
  });

  it('holds answers for the latency and answers at most the set rate, oldest first', async () => {
    const wanted = statsdService({ dnsLatencyMs: 30, dnsAnswersPerSecond: 100 });
    const services = await startServices([wanted]);
    try {
      const { contexts } = await services.prepare();
      const statsd = contexts.get(wanted)!;
      const resolver = resolverFor(statsd.dnsServer);
      let started = performance.now();
      await resolver.resolve4('statsd.hotpath.test');
      expect(performance.now() - started).toBeGreaterThanOrEqual(29);
      // 30 lookups at once at 100 answers a second: the last waits about 0.3 s.
      started = performance.now();
      await Promise.all(Array.from({ length: 30 }, () => resolver.resolve4('statsd.hotpath.test')));
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      const state = await statsd.state();
      expect(state.dns).toMatchObject({ answered: 31, waiting: 0 });
      expect(state.dns.waitingPeak).toBeGreaterThanOrEqual(20);
    } finally {
      await services.stop();
    }
  });

  it('folds a resend of a query still waiting into it: one answer, to the newest socket', async () => {
    // The query is held long enough that the resend surely arrives while it waits: with a 30 ms hold, a
    // busy CI machine once let the first be answered before the second was sent (two answers).
    const wanted = statsdService({ dnsLatencyMs: 1500 });
    const services = await startServices([wanted]);
    const sockets = [dgram.createSocket('udp4'), dgram.createSocket('udp4')];
    try {
      const { contexts } = await services.prepare();
      const statsd = contexts.get(wanted)!;
      // Same id and question, from another socket, as a resolver resends.
      const packet = new Packet();
      packet.header.id = 0xabcd;
      packet.questions.push({ name: 'statsd.hotpath.test', type: Packet.TYPE.A, class: Packet.CLASS.IN } as dns2.Packet.Question);
      const query = packet.toBuffer();
      const answers: number[] = [];
      sockets.forEach((socket, i) => socket.on('message', () => answers.push(i)));
      const [dnsHost, dnsPort] = statsd.dnsServer.split(':') as [string, string];
      for (const socket of sockets) {
        await new Promise<void>((resolve) => socket.send(query, Number(dnsPort), dnsHost, () => resolve()));
      }
      await expect.poll(() => answers.length, { timeout: 5000, interval: 50 }).toBeGreaterThan(0);
      // Room for a second answer, had the resend not been folded.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answers).toEqual([1]);
      expect((await statsd.state()).dns.duplicates).toBe(1);
    } finally {
      for (const socket of sockets) socket.close();
      await services.stop();
    }
  });

  it('says clearly when the control port is taken, and leaves nothing behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const error = await startServices([statsdService({ port })]).catch((e: unknown) => e);
      expect(String(error)).toMatch(new RegExp(`StatsD service .* did not start: port ${port} .* in use`));
      expect(liveServerCount()).toBe(0);
    } finally {
      blocker.close();
    }
  });
});
