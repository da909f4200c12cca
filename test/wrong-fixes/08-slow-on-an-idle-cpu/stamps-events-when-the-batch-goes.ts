// Wrong: stage 1, but each event's decidedAt is the moment its batch is published, not the moment of the
// decision, "the batch's time is close enough": every event of a batch reads as decided at once, up to a
// second after the decision itself, and the analytics can no longer order a user's decisions against the
// rest of their visit.
// after-load: was decided before its answer, by its event's decidedAt
import { setTimeout as sleep } from 'node:timers/promises';
import mqtt from 'mqtt';
import restify from 'restify';
import { assign, EXPERIMENTS, type DecisionEvent } from '../../../exercises/08-slow-on-an-idle-cpu/assignment.ts';

const FLUSH_EVERY_MS = 1000;
/** Events per message: ~100 bytes each, so a full batch is ~200 KB, well inside the broker's limits. */
const BATCH_LIMIT = 2000;
/** Events held at most, about two seconds of this service's load; past it, requests wait for room. */
const QUEUE_LIMIT = 20_000;
/** How long a graceful stop may take to publish what is left before giving up. */
const STOP_DEADLINE_MS = 8000;

const topic = process.env.BROKER_TOPIC ?? 'events/decisions';
const producer = await mqtt.connectAsync(process.env.BROKER_URL ?? 'mqtt://127.0.0.1:1883', { clientId: `decisions-${process.pid}` });
producer.on('error', (error) => console.error('broker connection:', error.message));

const queue: DecisionEvent[] = [];
const waitingForRoom: Array<() => void> = [];
let sending: Promise<void> | undefined;

/** Queues a decision's event; resolves at once unless the queue is full, then once there is room. */
async function record(event: DecisionEvent): Promise<void> {
  while (queue.length >= QUEUE_LIMIT) await new Promise<void>((resolve) => waitingForRoom.push(resolve));
  queue.push(event);
  if (queue.length >= BATCH_LIMIT) void flush();
}

/** Publishes what is queued now, one batch message at a time; one flush runs at a time. */
function flush(): Promise<void> {
  sending ??= publishQueued().finally(() => (sending = undefined));
  return sending;
}

async function publishQueued(): Promise<void> {
  let due = queue.length;
  while (due > 0) {
    const sentAt = Date.now();
    const batch = queue.slice(0, Math.min(due, BATCH_LIMIT)).map((event) => ({ ...event, decidedAt: sentAt }));
    try {
      await producer.publishAsync(topic, JSON.stringify(batch), { qos: 1 });
    } catch (error) {
      // The batch stays at the head of the queue; the next flush sends it again (at least once).
      console.error(`publishing ${batch.length} decisions failed:`, error);
      return;
    }
    // Removed only once acknowledged, so a failed publish loses nothing.
    queue.splice(0, batch.length);
    due -= batch.length;
    for (const wake of waitingForRoom.splice(0)) wake();
    // Full batches that piled up meanwhile go now rather than at the next tick.
    if (due === 0 && queue.length >= BATCH_LIMIT) due = queue.length - (queue.length % BATCH_LIMIT);
  }
}

const ticker = setInterval(() => void flush(), FLUSH_EVERY_MS);

const server = restify.createServer({ name: 'decisions' });

server.get('/experiments/:experiment/users/:user', async (req: restify.Request, res: restify.Response) => {
  const { experiment, user } = req.params as { experiment: string; user: string };
  if (!EXPERIMENTS.includes(experiment)) {
    res.send(404, { error: `no experiment ${experiment}; there are ${EXPERIMENTS.join(', ')}` });
    return;
  }
  const decision = assign(user, experiment);
  await record({ ...decision, decidedAt: Date.now() });
  res.send(decision);
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');

// A graceful stop: no new requests; the ones in flight finish (the ticker keeps running, so a request
// waiting for room gets it); then everything queued is published and acknowledged before the exit.
process.once('SIGTERM', async () => {
  const deadline = Date.now() + STOP_DEADLINE_MS;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.race([closed, sleep(STOP_DEADLINE_MS)]);
  while ((queue.length > 0 || sending) && Date.now() < deadline) {
    await flush();
    if (queue.length > 0) await sleep(100); // a failed publish: try again shortly
  }
  clearInterval(ticker);
  const lost = queue.length;
  if (lost > 0) console.error(`stopping with ${lost} decisions unpublished`);
  await producer.endAsync();
  process.exit(lost > 0 ? 1 : 0);
});
