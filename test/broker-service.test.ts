import net from 'node:net';
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { liveServerCount } from '../scripts/server-process.ts';
import { startServices } from '../scripts/services/index.ts';
import { brokerService, waitForEvents } from '../scripts/services/broker.ts';

describe('broker service', () => {
  it('acknowledges publishes after the set latency, one connection at a time, counts events per fresh topic, and stops clean', async () => {
    const before = liveServerCount();
    const wanted = brokerService({ ackLatencyMs: 20, mark: { field: 'user', prefix: 'check-' }, key: 'user', stamp: 'at' });
    const services = await startServices([wanted]);
    try {
      const beforeAny = Date.now();
      const first = await services.prepare();
      const second = await services.prepare();
      const broker = first.contexts.get(wanted)!;
      expect(first.env.BROKER_URL).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
      expect(first.env.BROKER_TOPIC).toBe(broker.topic);
      expect(second.env.BROKER_TOPIC).not.toBe(broker.topic);
      expect(services.describe()[0]).toContain('aedes');

      const client = await mqtt.connectAsync(broker.url);
      try {
        // One event, acknowledged no sooner than the set latency.
        let started = Date.now();
        await client.publishAsync(broker.topic, JSON.stringify({ user: 'u1', variant: 'A' }), { qos: 1 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(19);

        // A batch counts as the events it holds.
        await client.publishAsync(broker.topic, JSON.stringify([{ user: 'u2' }, { user: 'u3' }, { user: 'u4' }]), { qos: 1 });

        // Five publishes at once on one connection are acknowledged one after another, as a Kafka
        // broker serves one connection's requests in order: about 5 x 20 ms, not 20 ms.
        started = Date.now();
        await Promise.all(Array.from({ length: 5 }, (_, i) => client.publishAsync(broker.topic, JSON.stringify({ user: `s${i}` }), { qos: 1 })));
        expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 19);

        // QoS 0 has no acknowledgement: a QoS 1 publish after it on the same connection shows it arrived
        // (the client may close before a last QoS 0 message leaves; it did here).
        await client.publishAsync(broker.topic, 'not json', { qos: 0 });
        await client.publishAsync(broker.topic, JSON.stringify({ user: 'u5' }), { qos: 1 });
      } finally {
        await client.endAsync();
      }

      const { counts, reached } = await waitForEvents(broker, 10, { quietMs: 1000, limitMs: 5000 });
      expect(reached).toBe(true);
      expect(counts).toMatchObject({ events: 10, messages: 9, qos0: 1, unreadable: 1 });
      expect(counts.first.slice(0, 4)).toEqual([{ user: 'u1', variant: 'A' }, { user: 'u2' }, { user: 'u3' }, { user: 'u4' }]);
      expect((await second.contexts.get(wanted)!.counts()).events).toBe(0);

      // The sample holds every event while there are few, each with when it arrived.
      const few = await broker.sample();
      expect(few.seen).toBe(10);
      expect(few.events.map((e) => e.event)).toEqual(expect.arrayContaining([{ user: 'u1', variant: 'A' }, { user: 'u5' }]));
      for (const { arrivedAt } of few.events) expect(Math.abs(arrivedAt - Date.now())).toBeLessThan(10_000);

      // Past its 500, the sample is drawn from all of them: events of the last batch are as likely in it as the first's.
      const client2 = await mqtt.connectAsync(broker.url);
      try {
        for (const batch of [0, 1]) {
          await client2.publishAsync(broker.topic, JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ user: `b${batch}-${i}` }))), { qos: 1 });
        }
      } finally {
        await client2.endAsync();
      }
      await waitForEvents(broker, 2010, { quietMs: 1000, limitMs: 5000 });
      const many = await broker.sample();
      expect(many.seen).toBe(2010);
      expect(many.events).toHaveLength(500);
      const users = many.events.map((e) => (e.event as { user: string }).user);
      // About half from each batch (250 expected; 180 is more than 6 standard deviations below).
      expect(users.filter((u) => u.startsWith('b1-')).length).toBeGreaterThan(180);
      expect(users.filter((u) => u.startsWith('b0-')).length).toBeGreaterThan(180);

      // The events not marked as a check's own, counted by the time they arrived.
      const beforeMarked = Date.now();
      const client3 = await mqtt.connectAsync(broker.url);
      try {
        await client3.publishAsync(broker.topic, JSON.stringify([{ user: 'check-1' }, { user: 'c1', at: 1234 }, { user: 'check-2' }]), { qos: 1 });
      } finally {
        await client3.endAsync();
      }
      await waitForEvents(broker, 2013, { quietMs: 1000, limitMs: 5000 });
      expect((await broker.counts()).marked).toBe(2);
      const arrived = await broker.arrivedBy([beforeAny, beforeMarked, Date.now()]);
      expect(arrived.unmarked).toEqual([0, 2010, 2011]);
      expect((await second.contexts.get(wanted)!.arrivedBy([Date.now()])).unmarked).toEqual([0]);
      const bad = await fetch(`${broker.controlUrl}/topics/${encodeURIComponent(broker.topic)}/arrived?by=soon`);
      expect(bad.status).toBe(400);

      // When each unmarked event arrived, by its user: u1 once, c1 once, a check's own and an unknown user never.
      const byUser = await broker.arrivalsOf(['u1', 'c1', 'check-1', 'nobody', 'b1-999']);
      expect(byUser.map((times) => times.length)).toEqual([1, 1, 0, 0, 1]);
      expect(byUser[1]![0]!).toBeGreaterThanOrEqual(beforeMarked);
      expect(byUser[0]![0]!).toBeLessThan(beforeMarked);
      // An event sent twice has two arrival times.
      const client4 = await mqtt.connectAsync(broker.url);
      try {
        await client4.publishAsync(broker.topic, JSON.stringify({ user: 'c1', at: 9999 }), { qos: 1 });
      } finally {
        await client4.endAsync();
      }
      await waitForEvents(broker, 2014, { quietMs: 1000, limitMs: 5000 });
      expect((await broker.arrivalsOf(['c1']))[0]).toHaveLength(2);
      // And the stamp field of each user's first event: c1's first, none for an event without it or a user never seen.
      expect(await broker.stampsOf(['c1', 'u1', 'nobody'])).toEqual([1234, null, null]);
      expect(await second.contexts.get(wanted)!.arrivalsOf(['c1'])).toEqual([[]]);
      const notKeys = await fetch(`${broker.controlUrl}/topics/${encodeURIComponent(broker.topic)}/keys`, { method: 'POST', body: '[1]' });
      expect(notKeys.status).toBe(400);
    } finally {
      await services.stop();
    }
    expect(liveServerCount()).toBe(before);
  });

  it('says clearly when the MQTT port is taken, and leaves nothing behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const error = await startServices([brokerService({ port })]).catch((e: unknown) => e);
      expect(String(error)).toMatch(new RegExp(`message broker \\(aedes\\) did not start: port ${port} .* in use`));
      expect(liveServerCount()).toBe(0);
    } finally {
      blocker.close();
    }
  });
});
