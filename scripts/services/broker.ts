// The message-broker service: a real MQTT broker (aedes) in its own process, standing in for Kafka (see
// broker-server.ts for what it models), a fresh topic per server run, and the counts probes read.
import { ServerStartError, isPortFree, onFreePorts, startServer, type RunningServer } from '../server-process.ts';
import type { KeyArrivals, KeyStamps, TopicArrivals, TopicCounts, TopicSample } from './broker-server.ts';
import { defineService, type Service, type StartedService } from '../service.ts';

export type { KeyArrivals, KeyStamps, TopicArrivals, TopicCounts, TopicSample };

const BROKER_SERVER = new URL('./broker-server.ts', import.meta.url).pathname;
const TOPIC_ROOT = 'events';

export interface BrokerContext {
  /** mqtt://127.0.0.1:<port>, as the server gets it in BROKER_URL. */
  url: string;
  /** This server run's own topic, as the server gets it in BROKER_TOPIC. */
  topic: string;
  /** The broker's HTTP endpoint for counts. */
  controlUrl: string;
  /** What has arrived on this run's topic so far. */
  counts(): Promise<TopicCounts>;
  /** Events drawn at random from all that arrived on this run's topic so far, each with when it arrived. */
  sample(): Promise<TopicSample>;
  /** How many events not marked (the load's, not a check's own) had arrived on this run's topic by each time given. */
  arrivedBy(times: number[]): Promise<TopicArrivals>;
  /** When the unmarked events whose key field (BrokerOptions.key) has each value given arrived, in the order given. */
  arrivalsOf(keys: string[]): Promise<KeyArrivals>;
  /** The number the stamp field (BrokerOptions.stamp) held in the first event of each key given, in the order given. */
  stampsOf(keys: string[]): Promise<KeyStamps>;
}

export interface BrokerOptions {
  /** How long the broker holds each publish before acknowledging it, one at a time per connection. */
  ackLatencyMs?: number;
  /** The MQTT port; a free one when left out. */
  port?: number;
  /** Count apart the events whose `field` starts with `prefix` (TopicCounts.marked): a check's own traffic. */
  mark?: { field: string; prefix: string };
  /** Keep when each unmarked event arrived by the value of this field (BrokerContext.arrivalsOf). */
  key?: string;
  /** And the number this field holds in each key's first event (BrokerContext.stampsOf): 08's decidedAt. */
  stamp?: string;
}

/**
 * A real MQTT broker (aedes) standing in for Kafka; the server gets BROKER_URL and its own BROKER_TOPIC.
 * A subscriber in the broker counts the events per topic.
 */
export function brokerService(options: BrokerOptions = {}): Service<BrokerContext> {
  return defineService({ name: 'message broker (aedes)', start: () => startBroker(options) });
}

async function startBroker(options: BrokerOptions): Promise<StartedService<BrokerContext>> {
  if (options.port && !(await isPortFree(options.port))) {
    throw new ServerStartError(`port ${options.port} on 127.0.0.1 is already in use; stop what uses it or choose another port`, '');
  }
  const ackMs = options.ackLatencyMs ?? 0;
  let mqttPort = 0;
  const server: RunningServer = await onFreePorts(2, ([httpPort, freeMqttPort]) => {
    mqttPort = options.port || freeMqttPort!;
    return startServer(BROKER_SERVER, {
      port: httpPort,
      env: {
        BROKER_MQTT_PORT: String(mqttPort),
        BROKER_ACK_MS: String(ackMs),
        BROKER_TOPIC_ROOT: TOPIC_ROOT,
        ...(options.mark ? { BROKER_MARK_FIELD: options.mark.field, BROKER_MARK_PREFIX: options.mark.prefix } : {}),
        ...(options.key ? { BROKER_KEY_FIELD: options.key } : {}),
        ...(options.stamp ? { BROKER_STAMP_FIELD: options.stamp } : {}),
      },
    });
  });
  const url = `mqtt://127.0.0.1:${mqttPort}`;
  let runs = 0;
  return {
    async prepare() {
      const topic = `${TOPIC_ROOT}/run-${++runs}`;
      const context: BrokerContext = {
        url,
        topic,
        controlUrl: server.url,
        counts: () => topicCounts(server.url, topic),
        sample: () => topicSample(server.url, topic),
        arrivedBy: (times) => topicArrivals(server.url, topic, times),
        arrivalsOf: (keys) => keyArrivals(server.url, topic, keys),
        stampsOf: (keys) => keyStamps(server.url, topic, keys),
      };
      return { env: { BROKER_URL: url, BROKER_TOPIC: topic }, context };
    },
    describe: () => `message broker (aedes, MQTT) at ${url}, ${ackMs} ms per acknowledgement, counts at ${server.url}/topics`,
    async stop() {
      await server.stop();
    },
  };
}

export async function topicCounts(controlUrl: string, topic: string): Promise<TopicCounts> {
  const response = await fetch(`${controlUrl}/topics/${encodeURIComponent(topic)}`, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`the broker's counts answered ${response.status}`);
  return (await response.json()) as TopicCounts;
}

export async function topicSample(controlUrl: string, topic: string): Promise<TopicSample> {
  const response = await fetch(`${controlUrl}/topics/${encodeURIComponent(topic)}/sample`, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`the broker's sample answered ${response.status}`);
  return (await response.json()) as TopicSample;
}

/** Times asked per request: a long load's list would outgrow a URL. */
const TIMES_PER_REQUEST = 500;

export async function topicArrivals(controlUrl: string, topic: string, times: number[]): Promise<TopicArrivals> {
  const all: TopicArrivals = { by: [], unmarked: [] };
  for (let from = 0; from < times.length; from += TIMES_PER_REQUEST) {
    const by = times.slice(from, from + TIMES_PER_REQUEST).map((time) => Math.round(time)).join(',');
    const response = await fetch(`${controlUrl}/topics/${encodeURIComponent(topic)}/arrived?by=${by}`, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`the broker's arrivals answered ${response.status}`);
    const part = (await response.json()) as TopicArrivals;
    all.by.push(...part.by);
    all.unmarked.push(...part.unmarked);
  }
  return all;
}

/** Keys asked per request: a JSON body of a few MB at most. */
const KEYS_PER_REQUEST = 50_000;

export function keyArrivals(controlUrl: string, topic: string, keys: string[]): Promise<KeyArrivals> {
  return byKeys<KeyArrivals[number]>(`${controlUrl}/topics/${encodeURIComponent(topic)}/keys`, keys, 'arrivals');
}

export function keyStamps(controlUrl: string, topic: string, keys: string[]): Promise<KeyStamps> {
  return byKeys<KeyStamps[number]>(`${controlUrl}/topics/${encodeURIComponent(topic)}/keys?stamps`, keys, 'stamps');
}

/** One answer per key, asked KEYS_PER_REQUEST keys at a time. */
async function byKeys<T>(url: string, keys: string[], what: string): Promise<T[]> {
  const all: T[] = [];
  for (let from = 0; from < keys.length; from += KEYS_PER_REQUEST) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(keys.slice(from, from + KEYS_PER_REQUEST)),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`the broker's ${what} by key answered ${response.status}`);
    all.push(...((await response.json()) as T[]));
  }
  return all;
}

/**
 * Waits until the topic holds at least `expected` events, or until none has arrived for `quietMs`, or
 * until `limitMs` has passed; returns the counts then.
 */
export async function waitForEvents(
  context: BrokerContext,
  expected: number,
  options: { quietMs?: number; limitMs?: number; intervalMs?: number } = {},
): Promise<{ counts: TopicCounts; reached: boolean; waitedMs: number }> {
  const { quietMs = 2000, limitMs = 30_000, intervalMs = 100 } = options;
  const started = Date.now();
  let counts = await context.counts();
  let lastChange = Date.now();
  while (counts.events < expected && Date.now() - lastChange < quietMs && Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    const now = await context.counts();
    if (now.events !== counts.events) lastChange = Date.now();
    counts = now;
  }
  return { counts, reached: counts.events >= expected, waitedMs: Date.now() - started };
}
