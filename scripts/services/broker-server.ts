// A real message broker on 127.0.0.1 (aedes, MQTT over TCP, pure JS), run in its own process by the
// harness like any server. No Kafka broker installs here, so it stands in for one:
// - BROKER_ACK_MS holds every publish that long before the broker acknowledges it (PUBACK) and passes
//   it on, as a Kafka leader waits for its replicas with acks=all.
// - One connection's publishes are acknowledged one after another, as a Kafka broker processes one
//   request per connection at a time. aedes alone would handle every publish of a socket read at once,
//   so the order is kept here, per client.
// - A subscriber inside the broker counts the events arriving on each topic (a message holding a JSON
//   array is a batch and counts as the events in it) and keeps each topic's first events, for probes,
//   and a sample of all its events drawn at random as they arrive, each with the time it arrived, and
//   when the events that are not marked (the load's, not a check's own) arrived, to count them by a time,
//   and, when BROKER_KEY_FIELD is set, when each such event arrived by the value of that field (08: the
//   user, new in every request of the load), so that one answer's own event can be found; with
//   BROKER_STAMP_FIELD, also the number that field of the key's first event held (08: its decidedAt).
// The MQTT port is BROKER_MQTT_PORT; the counts are served over HTTP on PORT, which listens last, so
// the harness sees the broker ready only once both are.
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Aedes, type Client } from 'aedes';
import { countAtMost } from '../stats.ts';

const port = Number(process.env.PORT ?? 0);
const mqttPort = Number(process.env.BROKER_MQTT_PORT ?? 1883);
const ackMs = Number(process.env.BROKER_ACK_MS ?? 0);
/** Topics the counting subscriber listens to; the harness hands out topics under this root. */
const ROOT = process.env.BROKER_TOPIC_ROOT ?? 'events';
const KEPT_EVENTS = 200;
/** Events per topic kept drawn at random (reservoir sampling), so a check can read the load's own. */
const SAMPLED_EVENTS = 500;
const markField = process.env.BROKER_MARK_FIELD;
const markPrefix = process.env.BROKER_MARK_PREFIX;
const keyField = process.env.BROKER_KEY_FIELD;
const stampField = process.env.BROKER_STAMP_FIELD;

export interface TopicCounts {
  /** Events arrived: a single event per plain message, the array's length for a batch. */
  events: number;
  /** MQTT messages arrived. */
  messages: number;
  /** Messages published with QoS 0: the broker never acknowledged them, and a lost one goes unnoticed. */
  qos0: number;
  /** Messages whose payload is neither a JSON object nor a JSON array. */
  unreadable: number;
  /** The topic's first events, in arrival order, as parsed. */
  first: unknown[];
  /** Events whose BROKER_MARK_FIELD starts with BROKER_MARK_PREFIX (0 when not set): a probe's own traffic. */
  marked: number;
}

/** A sample of a topic's events, every event as likely to be in it as any other. */
export interface TopicSample {
  /** Events the sample was drawn from: all that arrived on the topic. */
  seen: number;
  /** Each with the time the broker counted it (ms since the epoch, after its acknowledgement latency). */
  events: Array<{ event: unknown; arrivedAt: number }>;
}

/** How many unmarked events had arrived on a topic by each time asked (ms since the epoch). */
export interface TopicArrivals {
  by: number[];
  unmarked: number[];
}

const topics = new Map<string, TopicCounts>();
/** Per topic, each message's arrival time and the unmarked events arrived up to it, both in arrival order. */
const arrivals = new Map<string, { at: number[]; unmarked: number[] }>();
const samples = new Map<string, TopicSample>();
/** Per topic, the first arrival of the unmarked events by their BROKER_KEY_FIELD value, and the later ones apart (rare). */
const byKey = new Map<string, { first: Map<string, number>; again: Map<string, number[]>; stamps: Map<string, number> }>();

/** For each key asked, when its events arrived on a topic (ms since the epoch, in arrival order; none: empty). */
export type KeyArrivals = number[][];
/** For each key asked, the number BROKER_STAMP_FIELD held in its first event (null: none, or not a number). */
export type KeyStamps = Array<number | null>;
const emptyCounts = (): TopicCounts => ({ events: 0, messages: 0, qos0: 0, unreadable: 0, first: [], marked: 0 });

function isMarked(event: unknown): boolean {
  if (!markField || !markPrefix || event === null || typeof event !== 'object') return false;
  const value = (event as Record<string, unknown>)[markField];
  return typeof value === 'string' && value.startsWith(markPrefix);
}

function count(topic: string, payload: Buffer, qos: number): void {
  let counts = topics.get(topic);
  if (!counts) topics.set(topic, (counts = emptyCounts()));
  counts.messages += 1;
  if (qos === 0) counts.qos0 += 1;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const events = Array.isArray(parsed) ? parsed : parsed !== null && typeof parsed === 'object' ? [parsed] : undefined;
  if (!events) {
    counts.unreadable += 1;
    return;
  }
  counts.events += events.length;
  const marked = events.filter(isMarked).length;
  counts.marked += marked;
  const arrivedAt = Date.now();
  let arrived = arrivals.get(topic);
  if (!arrived) arrivals.set(topic, (arrived = { at: [], unmarked: [] }));
  arrived.at.push(arrivedAt);
  arrived.unmarked.push((arrived.unmarked.at(-1) ?? 0) + events.length - marked);
  if (keyField) {
    let keys = byKey.get(topic);
    if (!keys) byKey.set(topic, (keys = { first: new Map(), again: new Map(), stamps: new Map() }));
    for (const event of events) {
      if (isMarked(event) || event === null || typeof event !== 'object') continue;
      const key = (event as Record<string, unknown>)[keyField];
      if (typeof key !== 'string') continue;
      if (!keys.first.has(key)) {
        keys.first.set(key, arrivedAt);
        const stamp = stampField ? (event as Record<string, unknown>)[stampField] : undefined;
        if (typeof stamp === 'number') keys.stamps.set(key, stamp);
      } else keys.again.set(key, [...(keys.again.get(key) ?? []), arrivedAt]);
    }
  }
  let sample = samples.get(topic);
  if (!sample) samples.set(topic, (sample = { seen: 0, events: [] }));
  for (const event of events) {
    sample.seen += 1;
    if (sample.events.length < SAMPLED_EVENTS) sample.events.push({ event, arrivedAt });
    else {
      const slot = Math.floor(Math.random() * sample.seen);
      if (slot < SAMPLED_EVENTS) sample.events[slot] = { event, arrivedAt };
    }
  }
  for (const event of events) {
    if (counts.first.length >= KEPT_EVENTS) break;
    counts.first.push(event);
  }
}

/** The unmarked events arrived on `topic` by `time`: the count up to the last message that arrived then or before. */
function unmarkedBy(topic: string, time: number): number {
  const arrived = arrivals.get(topic);
  if (!arrived) return 0;
  const messages = countAtMost(arrived.at, time);
  return messages === 0 ? 0 : arrived.unmarked[messages - 1]!;
}

const broker = await Aedes.createBroker();

// Each client's publishes wait their turn, then the set acknowledgement latency.
const turns = new WeakMap<Client, Promise<unknown>>();
broker.authorizePublish = (client, packet, callback) => {
  if (packet.topic.startsWith('$SYS')) return callback(new Error('$SYS topics are reserved'));
  if (!client || ackMs <= 0) return callback(null);
  const turn = (turns.get(client) ?? Promise.resolve()).then(() => sleep(ackMs));
  turns.set(client, turn);
  turn.then(() => callback(null));
};

broker.subscribe(
  `${ROOT}/#`,
  (packet, done) => {
    count(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload), packet.qos);
    done();
  },
  () => {},
);

const mqtt = net.createServer(broker.handle);
const control = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://broker');
  res.setHeader('content-type', 'application/json');
  if (url.pathname === '/topics') {
    res.end(JSON.stringify(Object.fromEntries([...topics].map(([topic, c]) => [topic, { ...c, first: c.first.length }]))));
    return;
  }
  // A topic is encoded whole (its slashes too), so a literal one after it names the sample.
  if (url.pathname.startsWith('/topics/') && url.pathname.endsWith('/sample')) {
    const topic = decodeURIComponent(url.pathname.slice('/topics/'.length, -'/sample'.length));
    res.end(JSON.stringify(samples.get(topic) ?? { seen: 0, events: [] }));
    return;
  }
  // POST a JSON array of keys: when each one's events arrived (KeyArrivals).
  if (url.pathname.startsWith('/topics/') && url.pathname.endsWith('/keys') && req.method === 'POST') {
    const topic = decodeURIComponent(url.pathname.slice('/topics/'.length, -'/keys'.length));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let keys: unknown;
      try {
        keys = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        keys = undefined;
      }
      if (!Array.isArray(keys) || keys.some((key) => typeof key !== 'string')) {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: 'the body: a JSON array of strings, the keys' }));
        return;
      }
      const known = byKey.get(topic);
      if (url.searchParams.has('stamps')) {
        res.end(JSON.stringify((keys as string[]).map((key) => known?.stamps.get(key) ?? null) satisfies KeyStamps));
        return;
      }
      const arrivals = (keys as string[]).map((key) => {
        const first = known?.first.get(key);
        return first === undefined ? [] : [first, ...(known!.again.get(key) ?? [])];
      });
      res.end(JSON.stringify(arrivals satisfies KeyArrivals));
    });
    return;
  }
  if (url.pathname.startsWith('/topics/') && url.pathname.endsWith('/arrived')) {
    const topic = decodeURIComponent(url.pathname.slice('/topics/'.length, -'/arrived'.length));
    const by = (url.searchParams.get('by') ?? '').split(',').filter(Boolean).map(Number);
    if (by.some((time) => !Number.isFinite(time))) {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: 'by: times in ms since the epoch, separated by commas' }));
      return;
    }
    res.end(JSON.stringify({ by, unmarked: by.map((time) => unmarkedBy(topic, time)) } satisfies TopicArrivals));
    return;
  }
  if (url.pathname.startsWith('/topics/')) {
    const topic = decodeURIComponent(url.pathname.slice('/topics/'.length));
    res.end(JSON.stringify(topics.get(topic) ?? emptyCounts()));
    return;
  }
  res.statusCode = 404;
  res.end(JSON.stringify({ error: 'GET /topics, /topics/<topic>, /topics/<topic>/sample or /topics/<topic>/arrived?by=<ms>,<ms>; POST /topics/<topic>/keys' }));
});

mqtt.listen(mqttPort, '127.0.0.1', () => {
  control.listen(port, '127.0.0.1', () => {
    process.stdout.write(`aedes on mqtt://127.0.0.1:${mqttPort}, ack latency ${ackMs} ms, counts on http://127.0.0.1:${port}/topics\n`);
  });
});

process.on('SIGTERM', () => {
  control.closeAllConnections();
  control.close();
  mqtt.close();
  broker.close(() => process.exit(0));
});
