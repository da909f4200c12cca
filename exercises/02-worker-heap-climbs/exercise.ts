import { randomUUID } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { Expectations, expectSample, fetchResponse, type CheckResult, type Finding } from '../../scripts/check.ts';
import { defineExercise, type AfterLoadContext, type AnswerContract, type CheckContext } from '../../scripts/manifest.ts';
import { answerAtOnce, listKeys, readObject, rewrittenCount, s3Service, storedCount, waitForUploads, type S3Context } from '../../scripts/services/s3.ts';
import { backlogGrowth } from '../../scripts/metrics/backlog-growth.ts';
import { heapGrowth } from '../../scripts/metrics/heap-growth.ts';
import { timersPeak } from '../../scripts/metrics/timers-peak.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { drawnAtRandom } from '../../scripts/stats.ts';
import { BODY_CHARS, debugKey, TRACE_ENTRIES, type NetworkTrace } from './trace.ts';

/** How many of the load's payloads the check after the load reads whole, drawn at random. */
const LOAD_PAYLOADS_READ = 100;
/** Tasks the correctness probe runs (before the load and again after it). */
const PROBE_TASKS = 2;
/** The institution the load's tasks name (they name no taskId: the worker makes one per task). */
const LOAD_INSTITUTION = 'ins_3';
/** Timestamps a task records are read as the time it ran: seconds off, not a minute. */
const CLOCK_SLACK_MS = 5_000;

/**
 * What a client of POST /tasks relies on in every answer, the probe's and the load's alike: the task's
 * summary as JSON, naming the task it was given (or a new id when it was given none) and its institution.
 */
function summaryProblems(status: number, contentType: string | null, json: unknown, task: { taskId?: string; institution: string }): string[] {
  const problems: string[] = [];
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (!/^application\/json\b/.test(contentType ?? '')) problems.push(`Content-Type ${JSON.stringify(contentType)}, not application/json`);
  const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : undefined;
  if (!body) return [...problems, 'the body is not a JSON object'];
  const namesTask = task.taskId === undefined ? typeof body.taskId === 'string' && body.taskId.length > 0 : body.taskId === task.taskId;
  if (!namesTask) problems.push(`taskId ${JSON.stringify(body.taskId)?.slice(0, 60)}, not ${task.taskId === undefined ? 'a new task id' : 'the task sent'}`);
  if (body.institution !== task.institution) problems.push(`institution ${JSON.stringify(body.institution)?.slice(0, 60)}, not the task's ${JSON.stringify(task.institution)}`);
  if (body.calls !== TRACE_ENTRIES) problems.push(`calls ${JSON.stringify(body.calls)?.slice(0, 40)}, not the task's ${TRACE_ENTRIES} bank calls`);
  if (body.status !== 'done') problems.push(`status field ${JSON.stringify(body.status)?.slice(0, 40)}, not "done"`);
  return problems;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Every answer of the load is a new task's summary: a task id seen twice is an answer not worked for. */
const contract: AnswerContract = {
  check: (answer) => summaryProblems(answer.status, answer.headers['content-type'] ?? null, parsed(answer.body), { institution: LOAD_INSTITUTION }),
  distinct: (answer) => {
    const taskId = (parsed(answer.body) as { taskId?: unknown } | undefined)?.taskId;
    return typeof taskId === 'string' ? taskId : undefined;
  },
  distinctWhat: 'the task id',
  everyAnswer: { key: (body) => /"taskId":\s*"([^"]*)"/.exec(body)?.[1], what: 'task id' },
};

/** Decodes a debugging payload as the replay tool would: base64, then inflate, then JSON. */
function decodePayload(stored: string): { trace?: NetworkTrace; problem?: string } {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(stored)) return { problem: 'it is not base64' };
  let json: string;
  try {
    json = inflateSync(Buffer.from(stored, 'base64')).toString('utf8');
  } catch {
    return { problem: 'its base64 does not inflate (it must be deflated, zlib format)' };
  }
  try {
    return { trace: JSON.parse(json) as NetworkTrace };
  } catch {
    return { problem: 'it inflates to something that is not JSON' };
  }
}

/**
 * What the replay tool relies on in one stored payload: it decodes, belongs to `taskId` (and names
 * `institution`, when given) and holds the whole trace; with `ran`, the span of the task's request, also
 * that the trace says it started then.
 */
function payloadFindings(stored: string, taskId: string, institution?: string, ran?: { from: number; to: number }): Finding[] {
  const { trace, problem } = decodePayload(stored);
  if (!trace) return [{ ok: false, what: 'the payload is deflated JSON as base64', ...(problem ? { detail: problem } : {}) }];
  const findings: Finding[] = [
    { ok: true, what: 'the payload is deflated JSON as base64' },
    { ok: trace.taskId === taskId, what: 'the payload names its task', detail: `stored under ${taskId}, names ${JSON.stringify(trace.taskId)}` },
  ];
  if (institution) findings.push({ ok: trace.institution === institution, what: 'the payload names the institution', detail: `got ${JSON.stringify(trace.institution)}` });
  if (ran) {
    const started = typeof trace.startedAt === 'string' ? Date.parse(trace.startedAt) : NaN;
    findings.push({
      ok: started >= ran.from - CLOCK_SLACK_MS && started <= ran.to + CLOCK_SLACK_MS,
      what: "the payload's startedAt is the time the task ran",
      detail: `startedAt ${JSON.stringify(trace.startedAt)}, the task ran at ${new Date(ran.from).toISOString()}`,
    });
  }
  const entries = Array.isArray(trace.entries) ? trace.entries : [];
  const bodies = entries.map((e) => (typeof e?.responseBody === 'string' ? e.responseBody.length : -1));
  findings.push({
    ok: entries.length === TRACE_ENTRIES && bodies.every((chars) => chars === BODY_CHARS) && entries.every((e) => typeof e.url === 'string'),
    what: `the payload holds the task's ${TRACE_ENTRIES} bank calls with their whole bodies (${BODY_CHARS} characters each)`,
    detail: `got ${entries.length} entries, bodies of ${bodies.length ? `${Math.min(...bodies)} to ${Math.max(...bodies)}` : 'no'} characters`,
  });
  // The bank's answers are random base64, 6 bits a character, which no compressor shrinks: a payload
  // that deflates to less holds something else in their place (padding, repeats).
  const bytes = Buffer.from(stored, 'base64').length;
  const least = Math.round(RANDOM_SHARE_AT_LEAST * TRACE_ENTRIES * BODY_CHARS * (6 / 8));
  findings.push({
    ok: bytes >= least && entries.every((e) => typeof e?.responseBody !== 'string' || BASE64_CHARS.test(e.responseBody)),
    what: "the bodies are the bank's answers as they came (random base64, which does not compress)",
    detail: `the payload deflates to ${bytes.toLocaleString('en-US')} bytes, where ${TRACE_ENTRIES} random bodies take at least ${least.toLocaleString('en-US')}`,
  });
  return findings;
}

/** The bank answers of a stored payload; none when it does not decode (payloadFindings says why). */
function bankAnswers(stored: string): string[] {
  const entries = decodePayload(stored).trace?.entries;
  return Array.isArray(entries) ? entries.flatMap((e) => (typeof e?.responseBody === 'string' ? [e.responseBody] : [])) : [];
}

/**
 * Bank answers in the payloads read that may equal one read before, as a share of them: two tasks' slices
 * of the pool meet by chance (6,000 slices of 1.4 million offsets: about a dozen pairs), a payload that
 * holds another task's answers repeats all sixty.
 */
const BODIES_REPEATED_AT_MOST = 0.05;

/** Writes over a stored payload allowed, as a share of the payloads: an upload the SDK retried after it had landed. */
const REWRITES_ALLOWED = 0.01;
/** Of the bits in the bank's random answers, the share a whole payload keeps at the least, deflated. */
const RANDOM_SHARE_AT_LEAST = 0.8;
const BASE64_CHARS = /^[A-Za-z0-9+/]*$/;

/** How long the probe waits for its payloads once no upload at all reaches the bucket. */
const UPLOAD_QUIET_MS = 4000;

/**
 * Waits for the objects, all together. After the load a worker may still be uploading a backlog, and the
 * probe's payloads are queued behind it: they get as long as uploads keep arriving (up to 90 s), and
 * UPLOAD_QUIET_MS more. Returns each key's object, or undefined for one that never arrived.
 */
async function waitForObjects(s3: S3Context, keys: string[], limitMs = 90_000): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>(keys.map((key) => [key, undefined]));
  const started = Date.now();
  let stored = await storedCount(s3).catch(() => -1);
  let lastArrival = started;
  for (;;) {
    for (const key of keys.filter((k) => found.get(k) === undefined)) {
      const object = await readObject(s3, key).catch(() => undefined);
      if (object !== undefined) found.set(key, object);
    }
    const now = Date.now();
    if (keys.every((k) => found.get(k) !== undefined) || now - lastArrival > UPLOAD_QUIET_MS || now - started > limitMs) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const count = await storedCount(s3).catch(() => stored);
    if (count !== stored) [stored, lastArrival] = [count, Date.now()];
  }
}

async function check(baseUrl: string, { services, loadOver }: CheckContext): Promise<CheckResult> {
  const expect = new Expectations();
  const s3 = services.get(S3);
  if (!expect.expect(Boolean(s3), 'the S3 service is running')) return expect.result();
  // After the load, the backlog of uploads arrives at once: the probe waits for its payloads, not the region.
  if (loadOver) await answerAtOnce(s3!);
  const tasks = Array.from({ length: PROBE_TASKS }, (_, i) => ({ taskId: `probe-${randomUUID()}`, institution: `ins_probe_${i}` }));
  const ran = new Map<string, { from: number; to: number }>();
  for (const task of tasks) {
    const from = Date.now();
    const response = await fetchResponse(`${baseUrl}/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(task) });
    ran.set(task.taskId, { from, to: Date.now() });
    const problems = summaryProblems(response.status, response.headers.get('content-type'), response.json, task);
    expect.expect(
      problems.length === 0,
      `POST /tasks answers 200 with the task's summary as JSON {taskId, institution, calls: ${TRACE_ENTRIES}, status: "done"}`,
      `${problems.join('; ')}: ${response.text.slice(0, 120)}`,
    );
  }
  const objects = await waitForObjects(s3!, tasks.map((task) => debugKey(task.taskId)));
  for (const task of tasks) {
    const stored = objects.get(debugKey(task.taskId));
    const detail = `nothing at ${debugKey(task.taskId)}, and no upload reached the bucket for ${UPLOAD_QUIET_MS / 1000} s`;
    if (!expect.expect(stored !== undefined, "the task's debugging payload arrives in the bucket", detail)) continue;
    for (const { ok, what, detail } of payloadFindings(stored!, task.taskId, task.institution, ran.get(task.taskId))) expect.expect(ok, what, detail);
  }
  return expect.result();
}

/** After the load: every task answered has its payload in the bucket, none lost, and a sample of them holds what the probe's do. */
async function afterLoad({ services, answered, probeAnswers, inFlightAtMost }: AfterLoadContext): Promise<CheckResult> {
  const expect = new Expectations();
  const s3 = services.get(S3)!;
  await answerAtOnce(s3);
  // The bucket also holds the probes' payloads (before the load and after it); the count below leaves them out.
  const settled = await waitForUploads(s3, answered + probeAnswers, { quietMs: 3000, limitMs: 90_000 });
  const keys = (await listKeys(s3)).filter((key) => key.startsWith('debug/') && !key.startsWith('debug/probe-'));
  // Requests still in flight when a phase of the load stopped may have been served without being counted.
  const most = answered + inFlightAtMost;
  expect.expect(
    keys.length >= answered,
    `every task answered under load has its payload in the bucket (${answered.toLocaleString('en-US')} answered, ${keys.length.toLocaleString('en-US')} stored, ` +
      `the last ${(settled.waitedMs / 1000).toFixed(1)} s after the load stopped)`,
    `${(answered - keys.length).toLocaleString('en-US')} of ${answered.toLocaleString('en-US')} are missing ${settled.settled ? '(no upload arrived for 3 s)' : 'after 90 s'}`,
  );
  expect.expect(keys.length <= most, 'no task uploaded twice', `${keys.length} payloads for at most ${most} tasks`);
  // A key counts as stored from its first write: one written again held something else first (a
  // placeholder ahead of the payload, which the bucket's count took for the payload).
  const rewritten = await rewrittenCount(s3);
  expect.expect(
    rewritten <= keys.length * REWRITES_ALLOWED,
    'each payload is written once, whole: none over an earlier object at its key',
    `${rewritten.toLocaleString('en-US')} payloads were written over an object already at their key`,
  );
  // A worker that stores less while it is loaded stores whole payloads for the probe: the load's own are
  // held to what the probe holds its payloads to, a sample read whole. At random, not the first keys
  // listed: the worker names its tasks, and so where their keys sort.
  const read: Finding[][] = [];
  const bodies: string[] = [];
  for (const key of drawnAtRandom(keys, LOAD_PAYLOADS_READ)) {
    const taskId = key.slice('debug/'.length, key.indexOf('.json'));
    const stored = await readObject(s3, key);
    read.push(payloadFindings(stored, taskId, LOAD_INSTITUTION));
    bodies.push(...bankAnswers(stored));
  }
  expectSample(expect, `the load's payloads hold what the probe's do (${read.length} of ${keys.length.toLocaleString('en-US')} read whole, drawn at random)`, read);
  // Each task's own bank answers: random slices of a pool, which meet by chance a few times in thousands.
  const repeats = bodies.length - new Set(bodies).size;
  expect.expect(
    repeats <= bodies.length * BODIES_REPEATED_AT_MOST,
    `each payload holds its own task's bank answers (${bodies.length.toLocaleString('en-US')} bodies in the payloads read, ${repeats} the same as another)`,
    `${repeats.toLocaleString('en-US')} of ${bodies.length.toLocaleString('en-US')} bank answers in the payloads read are the same as one in another payload`,
  );
  return expect.result();
}

/**
 * A real S3 API on 127.0.0.1, each request held 500 ms as a far region's round trip would be (at 200 ms,
 * a worker slower than 250 tasks/s barely outran the SDK's 50 sockets: see the solution's README).
 */
// Only the debugging payloads count as work done: any other object a server writes is not an upload owed.
const S3 = s3Service({ latencyMs: 500, countPrefix: 'debug/' });

export default defineExercise({
  id: '02-worker-heap-climbs',
  title: 'The worker whose heap climbs',
  caseStudy: {
    company: 'Plaid',
    article: 'How we parallelized our Node service by 30x (Plaid engineering)',
    source: 'shared/seeds/000_c44225373a6ac297.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  // A real S3 API on 127.0.0.1; the delay stands in for the round trip to a bucket in another place.
  services: [S3],
  // Two heap samples a second: the heap's low points over a 6 s phase, in windows of 1.5 s.
  probe: { sampleMs: 500 },
  load: {
    path: '/tasks',
    method: 'POST',
    body: JSON.stringify({ institution: LOAD_INSTITUTION }),
    headers: { 'content-type': 'application/json' },
    connections: 30,
    warmupSeconds: 1,
    durationSeconds: 6,
    // One server after another: the shipped server's heap climbs only under sustained load and falls
    // back between turns. Taken within 3 s turns, the heap's slope read 0.29x to 1.25x the shipped
    // server's for the shipped file itself, and a raised heap limit read below zero (see
    // docs/measuring.md).
    turns: false,
  },
  check,
  contract,
  afterLoad,
  // Payloads stored in the server's bucket: set against the tasks answered, how fast the uploads fall behind.
  finishedWork: (services) => storedCount(services.get(S3)!),
  goal: [
    { metric: heapGrowth, against: 'broken', atMost: 0.75 },
    { metric: timersPeak, against: 'broken', atMost: 0.4 },
    { metric: backlogGrowth, against: 'broken', atMost: 0.15 },
    { metric: requestsPerSecond, against: 'broken', atLeast: 0.35 },
  ],
});
