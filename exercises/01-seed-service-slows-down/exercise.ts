import { randomUUID } from 'node:crypto';
import { Expectations, fetchResponse, type CheckResult } from '../../scripts/check.ts';
import { defineExercise, type AnswerContract, type AnswerSample } from '../../scripts/manifest.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

const HEX_LENGTH = 10_000; // 5,000 random bytes as hex

interface SeedBody {
  data?: unknown;
  url?: unknown;
  ts?: unknown;
}

function seedOf(json: unknown): SeedBody {
  return typeof json === 'object' && json !== null ? (json as SeedBody) : {};
}

/** A client reads `ts` as the time of the answer: seconds off, not a minute. */
const TS_SLACK_MS = 5_000;

/** What a client of /seed/v1 relies on in every answer, the probe's and the load's alike. */
function seedProblems(status: number, contentType: string | null, json: unknown, path: string, receivedAt: number): string[] {
  const problems: string[] = [];
  const body = seedOf(json);
  if (status !== 200) problems.push(`status ${status}, not 200`);
  if (!/^application\/json\b/.test(contentType ?? '')) problems.push(`Content-Type ${JSON.stringify(contentType)}, not application/json`);
  if (json === undefined) problems.push('the body is not JSON');
  else {
    if (!(typeof body.data === 'string' && body.data.length === HEX_LENGTH && /^[0-9a-f]+$/.test(body.data))) {
      problems.push(`data is not 5,000 bytes as hex (${typeof body.data === 'string' ? `${body.data.length} characters` : JSON.stringify(body.data)?.slice(0, 40)})`);
    }
    if (body.url !== path) problems.push(`url ${JSON.stringify(body.url)?.slice(0, 60)}, not the URL requested`);
    if (!(typeof body.ts === 'number' && Math.abs(receivedAt - body.ts) < TS_SLACK_MS)) problems.push(`ts ${JSON.stringify(body.ts)} is not the time of the answer`);
  }
  return problems;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const contract: AnswerContract = {
  check: (answer: AnswerSample) => {
    const problems = seedProblems(answer.status, answer.headers['content-type'] ?? null, parsed(answer.body), '/seed/v1', answer.receivedAt);
    if (answer.headers['cache-control'] !== 'public, max-age=120') problems.push(`Cache-Control ${JSON.stringify(answer.headers['cache-control'])}`);
    // The load asks for one URL again and again: past its first answer, every one carries an ETag.
    if (!answer.headers.etag) problems.push('no ETag');
    return problems;
  },
  distinct: (answer) => (seedOf(parsed(answer.body)).data as string | undefined) ?? undefined,
  distinctWhat: 'the seed data',
  // Random bytes throughout, not a fresh head on bytes kept from an earlier answer.
  random: { value: (answer) => (seedOf(parsed(answer.body)).data as string | undefined) ?? undefined, what: 'the seed data' },
  // Every body is new, so its ETag is too (answers served at the same moment may share one).
  changes: { value: (answer) => answer.headers.etag, what: 'the ETag' },
  // Every answer's, not only the sampled: the middle of the body lies in the seed data, whatever the fields' order.
  everyAnswer: { key: (body) => (body.length > 5_000 ? body.slice(body.length / 2 - 16, body.length / 2 + 16) : undefined), what: 'seed data' },
};

const ceilingContract: AnswerContract = {
  check: (answer) => seedProblems(answer.status, answer.headers['content-type'] ?? null, parsed(answer.body), '/seed/v1', answer.receivedAt),
  // Its answers are keyed too: the load generator then does the same work for every server it measures.
  everyAnswer: contract.everyAnswer,
};

/** Status, body shape, the request's own URL in the body, fresh data per request. */
async function expectSeed(expect: Expectations, baseUrl: string, path: string): Promise<{ data?: string; etag: string | null }> {
  const response = await fetchResponse(baseUrl + path);
  const body = seedOf(response.json);
  const problems = seedProblems(response.status, response.headers.get('content-type'), response.json, path, Date.now());
  expect.expect(problems.length === 0, `GET ${path} answers 200 with the seed as JSON (data, url, ts)`, problems.join('; '));
  expect.expect(
    response.headers.get('cache-control') === 'public, max-age=120',
    'Cache-Control is "public, max-age=120"',
    `got ${JSON.stringify(response.headers.get('cache-control'))}`,
  );
  return { data: typeof body.data === 'string' ? body.data : undefined, etag: response.headers.get('etag') };
}

async function check(baseUrl: string): Promise<CheckResult> {
  const expect = new Expectations();
  const path = `/seed/v1?probe=${randomUUID()}`;
  const otherPath = `/seed/v1?probe=${randomUUID()}`;
  const first = await expectSeed(expect, baseUrl, path);
  const second = await expectSeed(expect, baseUrl, path);
  const third = await expectSeed(expect, baseUrl, path);
  const other = await expectSeed(expect, baseUrl, otherPath);
  const seeds = [first.data, second.data, third.data, other.data];
  expect.expect(new Set(seeds).size === seeds.length, 'every request gets fresh random data', 'some requests got the same data');
  expect.expect(Boolean(second.etag), 'a repeated request for the same URL carries an ETag', 'no ETag header');
  expect.expect(
    Boolean(second.etag && third.etag && second.etag !== third.etag),
    'the ETag changes when the body changes',
    `ETags ${second.etag} then ${third.etag} for different bodies`,
  );
  return expect.result();
}

/** The ceiling serves the payload and nothing else: no ETag, no Cache-Control. */
async function ceilingCheck(baseUrl: string): Promise<CheckResult> {
  const expect = new Expectations();
  const response = await fetchResponse(`${baseUrl}/seed/v1`);
  const body = seedOf(response.json);
  expect.expect(response.status === 200, 'GET /seed/v1 answers 200', `got ${response.status}`);
  expect.expect(typeof body.data === 'string' && body.data.length === HEX_LENGTH, 'data is 5,000 bytes as hex');
  return expect.result();
}

export default defineExercise({
  id: '01-seed-service-slows-down',
  title: 'The seed service that slows down',
  caseStudy: {
    company: 'nearForm',
    article: 'Keeping Node.js fast: tools, techniques and tips for making high-performance Node.js servers (part 2)',
    source: 'shared/seeds/003_2eb39058780a6558.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  ceilingFile: 'ceiling.ts',
  load: {
    path: '/seed/v1',
    connections: 10,
    warmupSeconds: 1,
    durationSeconds: 5,
    // The shipped server slows with every request it has served: it takes 4 turns and no more, so every
    // run measures it at the same age (more would make it look worse, not a fix better); the others go on.
    turns: { seconds: 1, minRounds: 4, maxRounds: 11, brokenRounds: 4 },
  },
  check,
  ceilingCheck,
  contract,
  ceilingContract,
  goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 20 }],
});
