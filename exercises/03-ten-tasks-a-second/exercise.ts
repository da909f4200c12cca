import { isDeepStrictEqual } from 'node:util';
import { inflateSync } from 'node:zlib';
import { Expectations, fetchResponse, type CheckResult, type Finding } from '../../scripts/check.ts';
import { answeredWithin } from '../../scripts/answers.ts';
import { defineExercise, type AnswerContract } from '../../scripts/manifest.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { buildTrace, summarize } from './trace.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What each task waits on "the bank" before it builds its trace (the brief). */
const BANK_WAIT_MS = 20;

interface TaskBody {
  seed?: unknown;
  result?: unknown;
  debug?: unknown;
}

function bodyOf(json: unknown): TaskBody {
  return typeof json === 'object' && json !== null ? (json as TaskBody) : {};
}

/** Inflates the debug field; says what is wrong with it when it cannot. */
function decode(debug: unknown): { text?: string; bytes?: number; problem?: string } {
  if (typeof debug !== 'string' || debug.length === 0) return { problem: `got ${JSON.stringify(debug)?.slice(0, 40)}` };
  if (!BASE64.test(debug)) {
    const at = debug.search(/[^A-Za-z0-9+/=]|=[^=]/);
    return { problem: `not one base64 string (${debug.length} characters, unexpected "${debug[at] ?? ''}" at ${at})` };
  }
  const bytes = Buffer.from(debug, 'base64');
  try {
    return { text: inflateSync(bytes).toString('utf8'), bytes: bytes.length };
  } catch (error) {
    const head = bytes.subarray(0, 2).toString('hex');
    const kind = head === '1f8b' ? 'gzip data, not zlib deflate' : head.startsWith('5b') || head.startsWith('7b') ? 'plain JSON, not compressed' : `first bytes ${head}`;
    return { problem: `${(error as Error).message} (${kind})` };
  }
}

/**
 * The payload is stored and sent compressed: zlib's levels 1 to 9 deflate a trace to 0.16-0.19 of its JSON,
 * level 0 stores it as it is (1.00) and Huffman coding alone gives 0.61.
 */
const COMPRESSED_AT_MOST = 1 / 3;
const COMPRESSED_SHARE_WORDS = 'a third';

/**
 * Everything a client of /tasks/run relies on in one answer, the probe's and the load's alike: 200, JSON,
 * the seed (the one asked for, else a new one), the result and the debug payload rebuilt from that seed.
 * A trace is ~65 KB of JSON, ~15 KB deflated: rebuilding and inflating it takes about half a millisecond.
 */
function taskFindings(status: number, contentType: string | null, json: unknown, raw: string, path: string, seed?: number): { findings: Finding[]; seed?: number } {
  const findings: Finding[] = [];
  const note = (ok: boolean, what: string, detail?: string) => (findings.push({ ok, what, detail }), ok);
  const body = bodyOf(json);
  if (!note(status === 200, `GET ${path} answers 200`, `got ${status}: ${raw.slice(0, 80)}`)) return { findings };
  note(/^application\/json\b/.test(contentType ?? ''), 'the answer is JSON with Content-Type application/json', `got ${JSON.stringify(contentType)}`);
  const okSeed = seed === undefined ? Number.isInteger(body.seed) : body.seed === seed;
  note(okSeed, seed === undefined ? 'a task without a seed reports the seed it drew' : 'the task reports the seed it was given', `got ${JSON.stringify(body.seed)}`);
  if (!okSeed) return { findings };
  const taskSeed = body.seed as number;
  const trace = buildTrace(taskSeed);
  note(isDeepStrictEqual(body.result, summarize(trace)), 'result summarizes the task\'s transactions', `seed ${taskSeed}: got ${JSON.stringify(body.result)?.slice(0, 80)}`);
  const { text, bytes, problem } = decode(body.debug);
  if (!note(text !== undefined, 'debug is base64 of zlib-deflated data', `seed ${taskSeed}: ${problem}`)) return { findings, seed: taskSeed };
  const expected = JSON.stringify(trace);
  let detail = `seed ${taskSeed}: ${text!.length} bytes, expected ${expected.length}`;
  if (text !== expected) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text!);
    } catch {
      parsed = undefined;
    }
    if (isDeepStrictEqual(parsed, trace)) detail += '; the same data, written differently: the payload must be compact JSON, as JSON.stringify writes it';
    else if (parsed === undefined) detail += expected.startsWith(text!) ? '; it is the start of the trace, cut short' : '; it is not JSON';
    else detail += '; different data: is it the trace of this seed?';
  }
  note(text === expected, "debug decodes to exactly JSON.stringify of the seed's trace", detail);
  note(
    bytes! <= expected.length * COMPRESSED_AT_MOST,
    `debug is compressed: its deflated bytes are at most ${COMPRESSED_SHARE_WORDS} of the JSON's length`,
    `seed ${taskSeed}: ${bytes} deflated bytes for ${expected.length} bytes of JSON (${(bytes! / expected.length).toFixed(2)}x): stored, not compressed`,
  );
  return { findings, seed: taskSeed };
}

/** Runs one task and checks everything in its answer against the trace rebuilt from its seed. */
async function expectTask(expect: Expectations, baseUrl: string, seed?: number): Promise<number | undefined> {
  const path = seed === undefined ? '/tasks/run' : `/tasks/run?seed=${seed}`;
  const response = await fetchResponse(baseUrl + path, {}, 15_000);
  const answer = taskFindings(response.status, response.headers.get('content-type'), response.json, response.text, path, seed);
  for (const { ok, what, detail } of answer.findings) expect.expect(ok, what, detail);
  return answer.seed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The load asks for new tasks (no seed): each answer is checked whole, and no seed may come back twice. */
const contract: AnswerContract = {
  check: (answer) => {
    const { findings } = taskFindings(answer.status, answer.headers['content-type'] ?? null, parseJson(answer.body), answer.body, '/tasks/run');
    // The words only: the details (seeds, lengths) differ from answer to answer, and the problems are counted by their words.
    const problems = findings.filter((f) => !f.ok).map((f) => f.what);
    // The bank's 20 ms stand for a call to a bank that no fix makes shorter. A 20 ms timer may fire up to
    // a millisecond early on the loop's clock, which is read once a turn of the loop.
    if (answeredWithin(answer, BANK_WAIT_MS - 2)) problems.push(`a task waits ${BANK_WAIT_MS} ms on the bank before it answers`);
    return problems;
  },
  distinct: (answer) => {
    const seed = bodyOf(parseJson(answer.body)).seed;
    return typeof seed === 'number' ? String(seed) : undefined;
  },
  distinctWhat: 'the task seed',
  everyAnswer: { key: (body) => /"seed":\s*(\d+)/.exec(body)?.[1], what: 'task seed' },
};

async function check(baseUrl: string): Promise<CheckResult> {
  const expect = new Expectations();
  for (const seed of [7, 2_024, 4_294_967_295]) await expectTask(expect, baseUrl, seed);
  const drawn: (number | undefined)[] = [];
  for (let i = 0; i < 3; i++) drawn.push(await expectTask(expect, baseUrl));
  expect.expect(new Set(drawn).size === drawn.length, 'every task without a seed is a new task with its own seed', `seeds ${drawn.join(', ')}`);
  const bad = await fetchResponse(`${baseUrl}/tasks/run?seed=banana`);
  expect.expect(bad.status === 400, 'a seed that is not an integer answers 400', `got ${bad.status}`);
  return expect.result();
}

export default defineExercise({
  id: '03-ten-tasks-a-second',
  title: 'The worker that finishes ten tasks a second',
  caseStudy: {
    company: 'Plaid',
    article: 'How we parallelized our Node.js service by 30x (German translation)',
    source: 'shared/seeds/000_c44225373a6ac297.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  // The shipped server's requests take seconds: the harness lets it finish the warm-up's before measuring.
  // Each turn starts idle, and the shipped server's requests in flight finish together, one after another's
  // work: a turn that ends before the first batch reads 0 answers. 3 requests in flight and 3 s turns
  // leave room for a machine much slower than the ones measured (see the solution's README).
  load: { path: '/tasks/run', connections: 30, warmupSeconds: 2, durationSeconds: 10, settleAfterWarmup: true, turns: { seconds: 3, connections: 3, maxRounds: 9 } },
  check,
  contract,
  goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 5 }],
});
