import { isDeepStrictEqual } from 'node:util';
import { inflateSync } from 'node:zlib';
import { Expectations, fetchResponse, type CheckResult } from '../../scripts/check.ts';
import { defineExercise, type AnswerContract } from '../../scripts/manifest.ts';
import { buildTrace, summarize } from './trace.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

interface TaskBody {
  seed?: unknown;
  result?: unknown;
  debug?: unknown;
}

function bodyOf(json: unknown): TaskBody {
  return typeof json === 'object' && json !== null ? (json as TaskBody) : {};
}

/** Inflates the debug field; says what is wrong with it when it cannot. */
function decode(debug: unknown): { text?: string; problem?: string } {
  if (typeof debug !== 'string' || debug.length === 0) return { problem: `got ${JSON.stringify(debug)?.slice(0, 40)}` };
  if (!BASE64.test(debug)) {
    const at = debug.search(/[^A-Za-z0-9+/=]|=[^=]/);
    return { problem: `not one base64 string (${debug.length} characters, unexpected "${debug[at] ?? ''}" at ${at})` };
  }
  const bytes = Buffer.from(debug, 'base64');
  try {
    return { text: inflateSync(bytes).toString('utf8') };
  } catch (error) {
    const head = bytes.subarray(0, 2).toString('hex');
    const kind = head === '1f8b' ? 'gzip data, not zlib deflate' : head.startsWith('5b') || head.startsWith('7b') ? 'plain JSON, not compressed' : `first bytes ${head}`;
    return { problem: `${(error as Error).message} (${kind})` };
  }
}

/** One thing a client relies on in an answer, kept or not; `what` is the same words for every answer. */
interface Finding {
  ok: boolean;
  what: string;
  detail?: string;
}

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
  const { text, problem } = decode(body.debug);
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
    return findings.filter((f) => !f.ok).map((f) => f.what);
  },
  distinct: (answer) => {
    const seed = bodyOf(parseJson(answer.body)).seed;
    return typeof seed === 'number' ? String(seed) : undefined;
  },
  distinctWhat: 'the task seed',
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
  // Each turn starts idle, and the shipped server's 6 requests in flight finish together, about a second
  // in: a 1 s turn read 0 answers in one suite run. 2 s turns hold one batch or two.
  load: { path: '/tasks/run', connections: 30, warmupSeconds: 2, durationSeconds: 10, settleAfterWarmup: true, turns: { seconds: 2, connections: 6, maxRounds: 9 } },
  check,
  contract,
  stages: [
    {
      file: '1-jsonstream.ts',
      title: 'JSONStream instead of bfj',
      changes:
        "bfj.streamify pushed every token of the JSON as its own chunk, about 16,000 per task, and each one was a separate write into zlib. JSONStream serializes each trace event with JSON.stringify and writes one chunk per event, about 1,600 per task. Its open, separator and close strings are set to '[', ',' and ']' so the text stays exactly JSON.stringify's.",
      targets: [{ metric: 'requestsPerSecond', against: 'broken', atLeast: 5 }],
    },
    {
      file: '2-stringify-then-deflate.ts',
      title: 'one string, one deflate',
      changes:
        'The trace already sits in memory whole, so streaming it saves nothing. JSON.stringify makes one string, zlib.deflate compresses it in one call on the thread pool, and Buffer#toString makes the base64: one chunk instead of 1,600.',
      targets: [{ metric: 'requestsPerSecond', against: 'previous', atLeast: 2.7 }],
    },
  ],
  goal: [{ metric: 'requestsPerSecond', against: 'broken', atLeast: 5 }],
  profile: {
    lookFor:
      "Use flame or cpu and search for `bfj`, then `zlib`: about a quarter of the samples sit under bfj's `streamify.js` and `eventify.js` and about two fifths under `node:zlib`, where `processChunk` is the hottest frame of all by self time. bfj hands the deflate stream thousands of tiny chunks per task, and zlib pays a call for each. `(idle)` and `(garbage collector)` take most of the rest: little of the time is the task's own work.",
  },
  hints: [
    'Load it (`npm run workshop -- run 03 --load`) and read the runtime figures: the event loop is hardly delayed, yet ~10 tasks a second finish, though a task waits only 20 ms on the bank. Time the steps of the handler with performance.now(): which one takes the time?',
    'Profile it with a flame graph (the 0x command is in the README). The widest frames belong to node:zlib (processChunk) and to bfj (streamify.js, eventify.js), and the process sits idle for a third of the samples. Count the chunks: `let n = 0; stream.on(\'data\', () => n++)` on bfj.streamify(trace), and log n when it ends.',
    'bfj pushes every token of the JSON as a chunk of its own (each brace, comma, key and value): about 16,000 for one task. Each chunk is a separate write into zlib, and each zlib write is a round trip to the libuv thread pool. The article switched to JSONStream, which writes one chunk per value you give it.',
    "JSONStream.stringify(open, separator, close) runs JSON.stringify on each value written to it. Write the trace's events one by one. Its defaults ('[\\n', '\\n,\\n', '\\n]\\n') add newlines; the probe wants exactly JSON.stringify's text, so pass '[', ',' and ']'. That is stage 1, about 15x.",
    'JSONStream still makes one zlib write per event, about 1,600 per task. The trace already sits in memory whole, and it is ~65 KB: JSON.stringify it, deflate it in one call (promisify(zlib.deflate)) and .toString(\'base64\') the result. To keep streaming, join the chunks into 64 KB blocks before createDeflate instead. `npm run bench` compares them all.',
  ],
});
