import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import dns2, { Packet } from 'dns2';
import { describe, expect, it } from 'vitest';
import { isPortFree, liveServerCount } from '../scripts/server-process.ts';
import { startServices } from '../scripts/services/index.ts';
import { statsdService, waitForLines, type StatsdContext } from '../scripts/services/statsd.ts';
import { ServiceContexts } from '../scripts/service.ts';
import type { AnswerSample } from '../scripts/manifest.ts';
import exercise07 from '../exercises/07-p99-hits-a-second/exercise.ts';
import { assign, type Experiment } from '../exercises/07-p99-hits-a-second/experiments.ts';

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

      // The sink counts lines, not packets, per address and per metric name, and by when each arrived.
      const beforeFirst = Date.now() - 1;
      await sendLines('127.0.0.1', statsd.statsdPort, 'decisions.requests:1|c\ndecisions.latency_ms:3|ms');
      await waitForLines(statsd, 2, { quietMs: 1000, limitMs: 5000 });
      const betweenThem = Date.now();
      await sleep(20);
      await sendLines('127.0.0.2', statsd.statsdPort, 'decisions.requests:1|c|#variant:green');
      const { counts } = await waitForLines(statsd, 3, { quietMs: 1000, limitMs: 5000 });
      expect(counts).toEqual({ byAddress: { '127.0.0.1': 2, '127.0.0.2': 1 }, byName: { 'decisions.requests': 2, 'decisions.latency_ms': 1 }, lines: 3 });
      expect(await statsd.arrivedBy('decisions.requests', [beforeFirst, betweenThem, Date.now()])).toEqual([0, 1, 2]);
      expect(await statsd.arrivedBy('decisions.assigned', [Date.now()])).toEqual([0]);
      // And by what each line carried: its type and tags (sorted), how many, their values' sum, and how
      // many came with a sample rate under 1 (@1 is every line: not sampled).
      await sendLines('127.0.0.1', statsd.statsdPort, 'decisions.assigned:1|c|@0.5|#variant:grey,experiment:x\ndecisions.latency_ms:oops|ms|@1');
      await waitForLines(statsd, 5, { quietMs: 500, limitMs: 5000 });
      expect(await statsd.shapes()).toEqual({
        'decisions.requests': { 'c|': { lines: 1, sum: 1, sampled: 0 }, 'c|variant:green': { lines: 1, sum: 1, sampled: 0 } },
        'decisions.latency_ms': { 'ms|': { lines: 2, sum: null, sampled: 0 } },
        'decisions.assigned': { 'c|experiment:x,variant:grey': { lines: 1, sum: 1, sampled: 1 } },
      });
      await expect(statsd.arrivedBy('decisions.requests', [Number.NaN])).rejects.toThrow(/answered 400/);

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
      expect(await fresh.arrivedBy('decisions.requests', [Date.now()])).toEqual([0]);
      expect(await fresh.shapes()).toEqual({});
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

  it('changes one upstream path every everyMs, holds it still for a probe, and says what was served when', async () => {
    const wanted = statsdService({ upstreamRoutes: { '/x': 'a', '/y': 'kept' }, upstreamChanges: { path: '/x', everyMs: 100, documents: ['a', 'b'] } });
    const services = await startServices([wanted]);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const { contexts, env } = await services.prepare();
      const statsd = contexts.get(wanted)!;
      const upstream = env.UPSTREAM_URL!.replace('upstream.hotpath.test', '127.0.0.1');
      expect(services.describe()[0]).toContain('/x changes every 100 ms');
      // Under way, the path switches between its documents; the other paths stay as set.
      const seen = new Set<string>();
      const started = Date.now();
      while (Date.now() - started < 1500 && seen.size < 2) {
        const askedAt = Date.now();
        const answer = await get(`${upstream}/x`, agent);
        const at = Date.now();
        seen.add(JSON.parse(answer.body));
        // What was answered is among what the service says was current while it was asked.
        expect(statsd.answeredBetween('/x', askedAt, at)).toContain(JSON.parse(answer.body));
        expect(JSON.parse((await get(`${upstream}/y`, agent)).body)).toBe('kept');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect([...seen].sort()).toEqual(['a', 'b']);
      // A stretch of a second saw both; before the server run began, the routes it began with.
      expect(statsd.answeredBetween('/x', Date.now() - 1000, Date.now())).toEqual(expect.arrayContaining(['a', 'b']));
      expect(statsd.answeredBetween('/x', started - 60_000, started - 59_000)).toEqual(['a']);
      // Held: back at the routes the run began with, and no change for longer than three periods.
      await statsd.holdRoutes(async () => {
        // Past the millisecond the hold's change was acknowledged in, when the one before may still count.
        await new Promise((resolve) => setTimeout(resolve, 5));
        const from = Date.now();
        for (let i = 0; i < 8; i++) {
          expect(JSON.parse((await get(`${upstream}/x`, agent)).body)).toBe('a');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(statsd.answeredBetween('/x', from, Date.now())).toEqual(['a']);
      });
      await expect.poll(async () => JSON.parse((await get(`${upstream}/x`, agent)).body), { timeout: 2000, interval: 20 }).toBe('b');
    } finally {
      agent.destroy();
      await services.stop();
    }
  });

  it('answers one request in `every` at a path with a canary of its own, at most `most`, none while held, and names those served', async () => {
    const canary = { name: 'x', variants: [{ name: '{canary}', weight: 100 }] };
    const wanted = statsdService({ upstreamRoutes: { '/x': 'plain', '/y': 'other' }, upstreamCanaries: { path: '/x', every: 3, most: 2, document: canary } });
    const services = await startServices([wanted]);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const { contexts, env } = await services.prepare();
      const statsd = contexts.get(wanted)!;
      const upstream = env.UPSTREAM_URL!.replace('upstream.hotpath.test', '127.0.0.1');
      const ask = async (path: string) => JSON.parse((await get(`${upstream}${path}`, agent)).body) as unknown;
      // Only the canaries' path counts: /y between them changes nothing.
      const answers = [await ask('/x'), await ask('/y'), await ask('/x'), await ask('/x')];
      expect(answers).toEqual(['plain', 'other', 'plain', { name: 'x', variants: [{ name: 'canary-1', weight: 100 }] }]);
      // Held for a probe: every answer plain, and the count of requests waits too.
      await statsd.holdRoutes(async () => {
        for (let i = 0; i < 4; i++) expect(await ask('/x')).toBe('plain');
      });
      expect([await ask('/x'), await ask('/x'), await ask('/x')]).toEqual(['plain', 'plain', { name: 'x', variants: [{ name: 'canary-2', weight: 100 }] }]);
      // At most two a run, then plain again; the state names those served, and a reset starts over.
      for (let i = 0; i < 6; i++) expect(await ask('/x')).toBe('plain');
      expect((await statsd.state()).upstream.canaries).toEqual(['canary-1', 'canary-2']);
      await services.prepare();
      expect((await statsd.state()).upstream.canaries).toEqual([]);
    } finally {
      agent.destroy();
      await services.stop();
    }
  });

  it("07's contract: a decision whose allocation the registry replaced well before the request went out was kept", async () => {
    const services = await startServices(exercise07.services!);
    try {
      const { contexts } = await services.prepare();
      const statsd = contexts.get(exercise07.services![0]!) as StatsdContext;
      const decision = (variant: string, sentAt: number, user = 'u-42'): AnswerSample => ({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ experiment: 'checkout-button', user, variant }),
        receivedAt: sentAt + 2,
        sentAt,
      });
      const check = (answer: AnswerSample) => exercise07.contract!.check(answer, { services: contexts });
      // A moment when one allocation has been current for the last 60 ms (the registry switches every 200 ms).
      let served: unknown[] | undefined;
      let now = 0;
      await expect
        .poll(() => ((now = Date.now()), (served = statsd.answeredBetween('/experiments/checkout-button', now - 60, now + 2))?.length), { timeout: 3000, interval: 10 })
        .toBe(1);
      const current = assign(served![0] as Experiment, 'u-42');
      const other = current === 'grey' ? 'green' : 'grey';
      expect(check(decision(current, now))).toEqual([]);
      expect(check(decision(other, now)).join('; ')).toMatch(/the variant of an allocation the registry replaced more than 50 ms before the request went out/);
      // Both variants come up under load.
      await expect.poll(() => statsd.answeredBetween('/experiments/checkout-button', Date.now() - 100, Date.now())!.map((e) => assign(e as Experiment, 'u-42')), { timeout: 2000, interval: 20 }).toContain(other);
      // Another user, or a variant the experiment does not have: not the decision, dated or not.
      expect(check(decision(current, now, 'u-7')).join('; ')).toMatch(/not the decision/);
      expect(check(decision('blue', now)).join('; ')).toMatch(/not the decision/);
      // A canary's variant is traced after the load, against the canaries the registry served; for another user, not the decision.
      expect(check(decision('canary-7', now))).toEqual([]);
      expect(check(decision('canary-7', now, 'u-7')).join('; ')).toMatch(/not the decision/);
      // Without the request's time, or the registry's record of its changes, nothing to compare the variant with.
      const { sentAt: _sentAt, ...undated } = decision(other, now);
      expect(check(undated)).toEqual([]);
      expect(exercise07.contract!.check(decision(other, now), { services: new ServiceContexts() })).toEqual([]);
    } finally {
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
