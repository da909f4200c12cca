import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Expectations, expectSample, fetchResponse, type CheckResult, type Finding } from '../../scripts/check.ts';
import { defineExercise, type AfterLoadContext, type AnswerContract, type CheckContext } from '../../scripts/manifest.ts';
import { brokerService, waitForEvents, type BrokerContext, type TopicCounts } from '../../scripts/services/broker.ts';
import { REQUEST_ID } from '../../scripts/load-profile.ts';
import { nextRequestId } from '../../scripts/load.ts';
import { latencyP99 } from '../../scripts/metrics/latency-p99.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { assign, EXPERIMENTS, type Decision } from './assignment.ts';

/** Decisions the correctness probe asks for; the after-load check counts their events too. */
/** How late an event may reach the broker after its decision: 1 s, and a margin of 1.5 s on top (2.5 s in the brief). */
const INTERVAL_MS = 1000;
const ARRIVAL_MARGIN_MS = 1500;
/** The broker's acknowledgement latency: a Kafka cluster with acks=all, replicas a few ms apart. */
const ACK_LATENCY_MS = 5;
/** The traffic that still arrives while the after-load check stops the server: clients, and for how long before SIGTERM. */
const STOP_TRAFFIC_WORKERS = 4;
const STOP_TRAFFIC_MS = 300;
/**
 * How long after SIGTERM a request may still be taken: the signal is handled on the loop's next turn, and
 * a server that closes its listener there refuses what comes after.
 */
const STOP_TAKING_MS = 1000;


/** An event's decidedAt is read as the time of the decision: seconds off, not a minute. */
const TS_SLACK_MS = 5000;
/** The broker counts an event after acknowledging it, on the server's clock: a decidedAt after that is made up. */
const ARRIVAL_CLOCK_SLACK_MS = 1000;
/** A decision answered under load was made before its answer: its decidedAt may be this much later (whole milliseconds). */
const DECIDED_CLOCK_SLACK_MS = 2;

const fmt = (n: number) => n.toLocaleString('en-US');

/** What a client relies on in every answer, the probe's and the load's alike: 200, JSON that says so, the user's own decision. */
function decisionProblems(status: number, contentType: string | null, json: unknown, expected: Decision): string[] {
  const problems: string[] = [];
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (!/^application\/json\b/.test(contentType ?? '')) problems.push(`Content-Type ${JSON.stringify(contentType)}, not application/json`);
  if (json === undefined) return [...problems, 'the body is not JSON'];
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  if (!(body.user === expected.user && body.experiment === expected.experiment && body.variant === expected.variant)) {
    problems.push(`not the decision {user: "${expected.user}", experiment: "${expected.experiment}", variant: "${expected.variant}"}`);
  }
  return problems;
}

/**
 * The load asks about a new user in every request (`u-` and the request's id): each answer's own event
 * can be found on the broker, and nothing in a request tells the load's from a probe's.
 */
const LOAD_USER_PREFIX = 'u-';
const loadUser = (id: string) => `${LOAD_USER_PREFIX}${id}`;

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const contract: AnswerContract = {
  check: (answer) =>
    answer.id === undefined
      ? ['its request had no id, so whose decision it should be is not known (the load\'s path names the user by the request\'s id)']
      : decisionProblems(answer.status, answer.headers['content-type'] ?? null, parsed(answer.body), assign(loadUser(answer.id), EXPERIMENTS[0]!)),
};

/** The probe's events among the topic's first events, by user. */
function eventsOf(counts: TopicCounts, users: Set<string>): Map<string, Record<string, unknown>[]> {
  const found = new Map<string, Record<string, unknown>[]>();
  for (const event of counts.first) {
    if (event === null || typeof event !== 'object') continue;
    const user = (event as Record<string, unknown>).user;
    if (typeof user !== 'string' || !users.has(user)) continue;
    found.set(user, [...(found.get(user) ?? []), event as Record<string, unknown>]);
  }
  return found;
}

async function check(baseUrl: string, { services }: CheckContext): Promise<CheckResult> {
  const expect = new Expectations();
  const broker = services.get(BROKER);
  if (!expect.expect(Boolean(broker), 'the message broker is running')) return expect.result();

  const unknown = await fetchResponse(`${baseUrl}/experiments/no-such-experiment/users/u-1`);
  expect.expect(unknown.status === 404, 'an unknown experiment answers 404', `got ${unknown.status}`);

  // A few decisions, one per experiment and one more, each user new and named as the load names its own
  // (nothing tells the probe from the load): the broker keeps when each user's events arrived, so the
  // probe finds its own after the load too, when the topic's first events are long past.
  const asked = [...EXPERIMENTS, EXPERIMENTS[0]!].map((experiment) => ({ user: loadUser(nextRequestId()), experiment }));
  const own = async () => (await broker!.arrivalsOf(asked.map((a) => a.user))).map((times) => times.length);
  const arrivedOnce = (events: number[]) => events.filter((n) => n > 0).length;
  const started = Date.now();
  const askedAt = new Map<string, number>();
  for (const { user, experiment } of asked) {
    askedAt.set(user, Date.now());
    const response = await fetchResponse(`${baseUrl}/experiments/${experiment}/users/${user}`);
    const expected = assign(user, experiment);
    const problems = decisionProblems(response.status, response.headers.get('content-type'), response.json, expected);
    expect.expect(
      problems.length === 0,
      `GET /experiments/${experiment}/users/${user} answers 200 with the user's stable variant as JSON {user, experiment, variant: "${expected.variant}"}`,
      `${problems.join('; ')}: got ${response.status} ${response.headers.get('content-type') ?? 'no Content-Type'}: ${response.text.slice(0, 120)}`,
    );
  }
  const answeredMs = Date.now() - started;

  // Every decision's event reaches the broker within the time the brief allows.
  const users = new Set(asked.map((a) => a.user));
  const deadline = Date.now() + INTERVAL_MS + ARRIVAL_MARGIN_MS;
  let events = await own();
  while (arrivedOnce(events) < users.size && Date.now() < deadline) {
    await sleep(100);
    events = await own();
  }
  const arrivedMs = Date.now() - started;
  let counts = await broker!.counts();
  expect.expect(
    arrivedOnce(events) >= users.size,
    `every decision's event reaches the broker within ${(INTERVAL_MS + ARRIVAL_MARGIN_MS) / 1000} s`,
    `${users.size - arrivedOnce(events)} of ${users.size} had not arrived ${(arrivedMs / 1000).toFixed(1)} s after the first request ` +
      `(answers took ${answeredMs} ms; ${counts.events} events on the topic)`,
  );
  // What each event carries, where the broker kept it: among the topic's first events, so before the load.
  const arrived = eventsOf(counts, users);
  for (const { user, experiment } of asked) {
    const event = arrived.get(user)?.[0];
    if (!event) continue;
    const expected = assign(user, experiment);
    const { decidedAt } = event;
    const timely = typeof decidedAt === 'number' && Math.abs(decidedAt - askedAt.get(user)!) < TS_SLACK_MS;
    expect.expect(
      event.experiment === expected.experiment && event.variant === expected.variant && timely,
      `the event for ${user} carries the decision {user, experiment, variant, decidedAt}`,
      `${timely ? '' : `decidedAt ${JSON.stringify(decidedAt)} is not the time of the decision (${askedAt.get(user)} ms since the epoch); `}got ${JSON.stringify(event).slice(0, 160)}`,
    );
  }

  // A second later still, nothing has arrived twice, and the broker acknowledged everything.
  await sleep(INTERVAL_MS + 200);
  counts = await broker!.counts();
  const extra = (await own()).reduce((total, n) => total + n, 0) - users.size;
  expect.expect(extra <= 0, 'each decision has exactly one event', `${extra} events more than the ${users.size} decisions: some were sent twice or more`);
  expect.expect(counts.unreadable === 0, 'every message is a JSON event or a JSON array of events (a batch)', `${counts.unreadable} were not`);
  expect.expect(
    counts.qos0 === 0,
    'every message is published with QoS 1, so the broker acknowledges it',
    `${counts.qos0} of ${counts.messages} went with QoS 0: nobody would know if they were lost`,
  );
  return expect.result();
}

/**
 * What every event on the topic must be, the load's as the probe's: a decision (the variant the user is
 * assigned in the experiment it names), stamped with when it was made, on the broker within the time the
 * brief allows of it. `arrivedAt` is when the broker counted it.
 */
function eventFindings(event: unknown, arrivedAt: number): Finding[] {
  const fields = (event !== null && typeof event === 'object' && !Array.isArray(event) ? event : {}) as Record<string, unknown>;
  const { user, experiment, variant, decidedAt } = fields;
  const decision = typeof user === 'string' && typeof experiment === 'string' && EXPERIMENTS.includes(experiment) ? assign(user, experiment) : undefined;
  const lateMs = typeof decidedAt === 'number' ? arrivedAt - decidedAt : undefined;
  const deadline = INTERVAL_MS + ARRIVAL_MARGIN_MS;
  return [
    { ok: decision !== undefined && variant === decision.variant, what: 'it carries a decision {user, experiment, variant}', detail: JSON.stringify(event).slice(0, 120) },
    { ok: lateMs !== undefined, what: 'it says when the decision was made (decidedAt, ms since the epoch)', detail: `decidedAt ${JSON.stringify(decidedAt)}` },
    {
      ok: lateMs === undefined || lateMs <= deadline,
      what: `it reached the broker within ${deadline / 1000} s of its decision`,
      detail: `${((lateMs ?? 0) / 1000).toFixed(1)} s after it`,
    },
    {
      ok: lateMs === undefined || lateMs >= -ARRIVAL_CLOCK_SLACK_MS,
      what: 'its decidedAt is not after it reached the broker',
      detail: `${(-(lateMs ?? 0) / 1000).toFixed(1)} s after`,
    },
  ];
}

/** One GET on a connection of its own (no keep-alive, so a closing server is not held open): its status, 0 when refused or cut. */
function statusOf(url: string, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve(0));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(0));
  });
}

/**
 * Decisions asked for by `workers` clients one after another until `stopped` settles, as traffic still
 * arrives while an orchestrator stops a server. Returns the users of those answered 200: each was served
 * and must have its event. Without this traffic, a server that forgets events it still owes at SIGTERM
 * could pass by luck, when it happened to owe none as the load ended.
 */
async function trafficUntil(baseUrl: string, stopped: Promise<unknown>, workers: number, onAnswer: () => void = () => {}): Promise<Array<{ user: string; sentAt: number }>> {
  let stopping = false;
  void stopped.finally(() => (stopping = true));
  const answered: Array<{ user: string; sentAt: number }> = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stopping) {
        // Named as the load names its users: nothing tells this traffic from the load's.
        const user = loadUser(nextRequestId());
        const sentAt = Date.now();
        const status = await statusOf(`${baseUrl}/experiments/${EXPERIMENTS[1]}/users/${user}`);
        if (status === 200) {
          answered.push({ user, sentAt });
          onAnswer();
        } else await sleep(5); // refused: the server has stopped listening
      }
    }),
  );
  return answered;
}

/**
 * After the load: stop the server as an orchestrator would (SIGTERM) while a little traffic still
 * arrives, wait for the broker's count to settle, and compare it with the decisions served. A request in
 * flight when a load phase (warm-up, measured) or the stop traffic ended may have been served without
 * its answer being counted, hence an upper bound above the decisions counted.
 */
async function afterLoad({ services, baseUrl, answered, answeredIds, probeAnswers, inFlightAtMost, stopServer }: AfterLoadContext): Promise<CheckResult> {
  const expect = new Expectations();
  const broker = services.get(BROKER) as BrokerContext;
  let exited!: () => void;
  let answeredNow: (() => void) | undefined;
  const traffic = trafficUntil(baseUrl, new Promise<void>((resolve) => (exited = resolve)), STOP_TRAFFIC_WORKERS, () => answeredNow?.());
  await sleep(STOP_TRAFFIC_MS);
  // SIGTERM the moment a decision has been answered: a server that forgets what it owes on SIGTERM then
  // owes at least that one, unless its own flush fell in the instant between (a second's timer, ~0.1%).
  await Promise.race([new Promise<void>((resolve) => (answeredNow = resolve)), sleep(2000)]);
  const termAt = Date.now();
  const exit = await stopServer();
  exited();
  const stopAnswers = await traffic;
  const stopUsers = stopAnswers.map(({ user }) => user);
  const duringStop = stopUsers.length;
  const how = exit.signal ? `it was ended by ${exit.signal}` : `it exited with code ${exit.code}`;
  // SIGKILL comes only when SIGTERM did not end it within 10 s: an orchestrator would have killed it with
  // whatever it still owed, and the traffic after SIGTERM was served as if nothing had happened.
  expect.expect(exit.signal !== 'SIGKILL', 'the server ends within 10 s of SIGTERM, as an orchestrator allows', `${how}: it was still running 10 s after SIGTERM`);
  // The brief: on SIGTERM the service stops taking requests. A server that goes on answering puts off its
  // stop for as long as traffic comes, and its events with it.
  const taken = stopAnswers.filter(({ sentAt }) => sentAt > termAt + STOP_TAKING_MS);
  expect.expect(
    taken.length === 0,
    `on SIGTERM it stops taking requests (none sent more than ${STOP_TAKING_MS / 1000} s after it was answered)`,
    `${taken.length} requests sent more than ${STOP_TAKING_MS / 1000} s after SIGTERM were answered 200, the last ${((Math.max(...taken.map(({ sentAt }) => sentAt)) - termAt) / 1000).toFixed(1)} s after it`,
  );

  // The probe decides too, before the load and after it.
  const least = answered + probeAnswers + duringStop;
  // At most one request per connection is in flight when a phase ends, and one per stop worker; a real
  // duplicate is far more than that.
  const most = least + inFlightAtMost + STOP_TRAFFIC_WORKERS;
  const settled = await waitForEvents(broker, least, { quietMs: 2000, limitMs: 15_000 });
  await sleep(300); // anything still on its way
  const counts = await broker.counts();
  const served = `${fmt(least)} decisions served (${fmt(answered)} under load, ${probeAnswers} by the probe, ${duringStop} as the stop began)`;
  expect.expect(
    counts.events >= least,
    `no decision lost across a graceful stop: ${served}, ${fmt(counts.events)} events on the broker in ${fmt(counts.messages)} messages; ${how}`,
    `${fmt(least - counts.events)} events lost (counted ${(settled.waitedMs / 1000).toFixed(1)} s after the server exited)`,
  );
  // The requests abandoned at the end of each load phase were served but not counted, so a few lost
  // events can hide in the totals above; the stop traffic's users are known one by one. A server that
  // forgets what it still owes the broker on SIGTERM loses the decisions answered last, which are these.
  const stopEvents = (await broker.arrivalsOf(stopUsers)).filter((times) => times.length > 0).length;
  expect.expect(
    stopEvents >= duringStop,
    `every decision answered while the server was being stopped has its event (${duringStop} answered, ${fmt(stopEvents)} of them with an event)`,
    `${fmt(duringStop - stopEvents)} events lost of the ${duringStop} decisions answered as the stop began`,
  );
  // Counting says how many; what the load's events say, and how soon they came, is read from a sample.
  const sample = await broker.sample();
  expectSample(
    expect,
    `the events say what the probe's do and came as soon (${sample.events.length} of the ${fmt(sample.seen)} read whole, drawn at random as they arrived)`,
    sample.events.map(({ event, arrivedAt }) => eventFindings(event, arrivedAt)),
  );
  // An event's decidedAt is whatever the server wrote in it; the load dates its answers itself. Each
  // request of the load asks about a user of its own, so every decision answered under load is held to
  // its own event: on the broker, once, by its answer's time and the deadline (counted from the answer,
  // which comes after the decision). A request abandoned as a phase ended is not among them.
  await expectOwnEvents(expect, broker, answeredIds);
  expect.expect(counts.events <= most, 'no decision sent twice', `${fmt(counts.events)} events for at most ${fmt(most)} decisions served`);
  expect.expect(counts.qos0 === 0, 'every message was acknowledged by the broker (QoS 1)', `${counts.qos0} went with QoS 0`);
  return expect.result();
}

/** Each decision answered under load has its own event on the broker, once, within the deadline of its answer. */
async function expectOwnEvents(expect: Expectations, broker: BrokerContext, answeredIds: AfterLoadContext['answeredIds']): Promise<void> {
  const deadline = INTERVAL_MS + ARRIVAL_MARGIN_MS;
  const users = answeredIds.map(({ id }) => loadUser(id));
  const arrivals = await broker.arrivalsOf(users);
  const decidedAt = await broker.stampsOf(users);
  let missing = 0;
  let late = 0;
  let twice = 0;
  let latestMs = 0;
  let stampedAfter = 0;
  let latestStampMs = 0;
  answeredIds.forEach(({ at }, i) => {
    const times = arrivals[i] ?? [];
    if (times.length === 0) missing += 1;
    else if (times[0]! > at + deadline) {
      late += 1;
      latestMs = Math.max(latestMs, times[0]! - at);
    }
    if (times.length > 1) twice += 1;
    // The decision comes before its answer, on the same clock.
    const stamp = decidedAt[i];
    if (typeof stamp === 'number' && stamp > at + DECIDED_CLOCK_SLACK_MS) {
      stampedAfter += 1;
      latestStampMs = Math.max(latestStampMs, stamp - at);
    }
  });
  const asked = `${fmt(answeredIds.length)} answers, each about a user of its own`;
  expect.expect(
    answeredIds.length > 0,
    'the load\'s answers are known one by one (its path names a new user in each request)',
    'none was: the load\'s path has no id in it',
  );
  expect.expect(
    missing === 0 && late === 0,
    `every decision answered under load had its own event on the broker within ${deadline / 1000} s of its answer (${asked})`,
    [late > 0 ? `${fmt(late)} arrived later (the latest ${(latestMs / 1000).toFixed(1)} s after its answer)` : '', missing > 0 ? `${fmt(missing)} never arrived` : '']
      .filter(Boolean)
      .join('; '),
  );
  expect.expect(twice === 0, `no decision answered under load sent twice (${asked})`, `${fmt(twice)} users' events arrived more than once`);
  expect.expect(
    stampedAfter === 0,
    `every decision answered under load was decided before its answer, by its event's decidedAt (${asked})`,
    `${fmt(stampedAfter)} events say their decision came after its answer (the latest ${fmt(latestStampMs)} ms after)`,
  );
}

/**
 * A real broker on 127.0.0.1 (aedes, MQTT) in place of Kafka: each publish is acknowledged 5 ms after
 * it arrives, one at a time per connection, as a Kafka broker with acks=all serves one producer.
 * It keeps when each user's events arrived, and the first one's decidedAt: every request, the load's, the
 * probe's and the stop traffic's, asks about a user of its own, named alike, so each answer is held to its own event.
 */
const BROKER = brokerService({ ackLatencyMs: ACK_LATENCY_MS, key: 'user', stamp: 'decidedAt' });

export default defineExercise({
  id: '08-slow-on-an-idle-cpu',
  title: 'The decisions that wait on an idle CPU',
  caseStudy: {
    company: 'Klarna',
    article: '6 lessons learned from optimizing the performance of a Node.js service (Klarna engineering), lesson 5',
    source: 'shared/seeds/001_c4c8d87c112f4b96.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  services: [BROKER],
  load: {
    path: `/experiments/${EXPERIMENTS[0]}/users/${LOAD_USER_PREFIX}${REQUEST_ID}`,
    connections: 50,
    warmupSeconds: 1,
    durationSeconds: 8,
    turns: { seconds: 1, maxRounds: 9 },
  },
  check,
  contract,
  afterLoad,
  goal: [
    { metric: latencyP99, against: 'broken', atMost: 0.2 },
    { metric: requestsPerSecond, against: 'broken', atLeast: 2 },
  ],
});
