import { Expectations, fetchResponse, type CheckResult } from '../../scripts/check.ts';
import { answeredWithin } from '../../scripts/answers.ts';
import { defineExercise, type AnswerContract } from '../../scripts/manifest.ts';
import { minorGcPerRequest } from '../../scripts/metrics/minor-gc-per-request.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { BANK_DELAY_MS, PAGES_PER_STATEMENT, TRANSACTION_POOL, TRANSACTIONS_PER_PAGE, pageEntries, statementNumber } from './bank.ts';

/** The bank calls of a refresh: it opens the statement, then reads its pages. */
const BANK_CALLS = 1 + PAGES_PER_STATEMENT;

interface Expected {
  transactions: number;
  pending: number;
  totals: Record<string, number>;
}

// The probe's own reading of the pool, from the same serialized text the bank sends.
const POOL = TRANSACTION_POOL.map((text) => JSON.parse(text) as { account: string; amount: number; pending: boolean });

/** What a correct worker answers for statement `n`: worked out from the bank's pages, not from the server. */
function expectedSummary(n: number): Expected {
  const totals: Record<string, number> = {};
  let pending = 0;
  for (let page = 0; page < PAGES_PER_STATEMENT; page++) {
    for (const index of pageEntries(n, page)) {
      const transaction = POOL[index]!;
      if (transaction.pending) pending += 1;
      else totals[transaction.account] = (totals[transaction.account] ?? 0) + Math.round(transaction.amount * 100);
    }
  }
  return { transactions: PAGES_PER_STATEMENT * TRANSACTIONS_PER_PAGE, pending, totals };
}

function sameTotals(a: unknown, b: Record<string, number>): boolean {
  if (typeof a !== 'object' || a === null || Array.isArray(a)) return false;
  const entries = Object.entries(a as Record<string, unknown>);
  return entries.length === Object.keys(b).length && entries.every(([account, cents]) => cents === b[account]);
}

interface Answer {
  statement?: number;
  ok: { status: boolean; json: boolean; count: boolean; pending: boolean; totals: boolean };
  detail: string;
}

/** What each kept promise of an answer is called, in the probe's expectations and the contract's problems. */
const WHAT: Record<keyof Answer['ok'], string> = {
  status: 'GET /refresh answers 200 with the statement_id the bank opened',
  json: 'the answer is JSON with Content-Type application/json',
  count: `transactions counts every transaction on all ${PAGES_PER_STATEMENT} pages (${PAGES_PER_STATEMENT * TRANSACTIONS_PER_PAGE})`,
  pending: 'pending counts the pending transactions',
  totals: 'totals are the posted amounts per account, in cents',
};

/**
 * What a client of /refresh relies on in one answer, the probe's and the load's alike: the summary of the
 * statement it names, worked out again from the bank's pages (400 pool entries: cheap).
 */
function answerOf(status: number, contentType: string | null, json: unknown, text: string): Answer {
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const statement = statementNumber(body.statement_id);
  const expected = statement === undefined ? undefined : expectedSummary(statement);
  const ok = {
    status: status === 200 && statement !== undefined,
    json: /^application\/json\b/.test(contentType ?? ''),
    count: expected !== undefined && body.transactions === expected.transactions,
    pending: expected !== undefined && body.pending === expected.pending,
    totals: expected !== undefined && sameTotals(body.totals, expected.totals),
  };
  const detail = expected
    ? `${String(body.statement_id)}: got ${JSON.stringify({ transactions: body.transactions, pending: body.pending, totals: body.totals })}, expected ${JSON.stringify(expected)}` +
      (ok.json ? '' : `, Content-Type ${JSON.stringify(contentType)}`)
    : `status ${status}, body ${text.slice(0, 120)}`;
  return { statement, ok, detail };
}

async function refresh(baseUrl: string): Promise<Answer> {
  const response = await fetchResponse(`${baseUrl}/refresh`, {}, 10_000);
  return answerOf(response.status, response.headers.get('content-type'), response.json, response.text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Each refresh opens a new statement: a statement id seen twice is a refresh that did not happen. */
const contract: AnswerContract = {
  check: (answer) => {
    const { ok } = answerOf(answer.status, answer.headers['content-type'] ?? null, parseJson(answer.body), answer.body);
    // Without a statement there is nothing to compare the figures with: its absence is the one problem.
    const keys: (keyof Answer['ok'])[] = ok.status ? (Object.keys(ok) as (keyof Answer['ok'])[]) : ['status', 'json'];
    const problems = keys.filter((key) => !ok[key]).map((key) => WHAT[key]);
    // A refresh calls the bank six times, one after another (each page's cursor comes with the page before
    // it). Each wait starts on the loop's clock, read once a turn and to the millisecond: 2 ms of slack.
    if (answeredWithin(answer, BANK_CALLS * BANK_DELAY_MS - 2)) problems.push(`a refresh waits on the bank ${BANK_CALLS} times, ${BANK_DELAY_MS} ms each, before it answers`);
    return problems;
  },
  distinct: (answer) => {
    const id = (parseJson(answer.body) as { statement_id?: unknown } | undefined)?.statement_id;
    return typeof id === 'string' ? id : undefined;
  },
  distinctWhat: 'the statement id',
  everyAnswer: { key: (body) => /"statement_id":\s*"([^"]*)"/.exec(body)?.[1], what: 'statement id' },
};

async function check(baseUrl: string): Promise<CheckResult> {
  const expect = new Expectations();
  // One refresh at a time, then eight that overlap, as they do under load.
  const answers = [await refresh(baseUrl), await refresh(baseUrl)];
  const overlapping = await Promise.all(Array.from({ length: 8 }, () => refresh(baseUrl)));
  const all = [...answers, ...overlapping];
  const firstBad = (key: keyof Answer['ok'], list = all) => list.find((a) => !a.ok[key])?.detail;

  expect.expect(all.every((a) => a.ok.status), WHAT.status, firstBad('status'));
  expect.expect(all.every((a) => a.ok.json), WHAT.json, firstBad('json'));
  const ids = all.map((a) => a.statement);
  expect.expect(new Set(ids).size === ids.length, 'each refresh opens a new statement', `statements ${ids.join(', ')}`);
  expect.expect(all.every((a) => a.ok.count), WHAT.count, firstBad('count'));
  expect.expect(all.every((a) => a.ok.pending), WHAT.pending, firstBad('pending'));
  expect.expect(answers.every((a) => a.ok.totals), WHAT.totals, firstBad('totals', answers));
  expect.expect(overlapping.every((a) => a.ok.totals), 'totals stay right when refreshes overlap', firstBad('totals', overlapping));
  return expect.result();
}

export default defineExercise({
  id: '04-parallel-worker-slows',
  title: 'The parallel worker that got slower per task',
  caseStudy: {
    company: 'Plaid',
    article: 'How we parallelized our Node service by 30x (Plaid engineering blog; German translation)',
    source: 'shared/seeds/000_c44225373a6ac297.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  // A 2 s warm-up: with 1 s, stage 1 was still speeding up in the first rounds (324 req/s rising to
  // 532), too close to call until round 10.
  load: { path: '/refresh', connections: 30, warmupSeconds: 2, durationSeconds: 6 },
  check,
  contract,
  goal: [
    { metric: minorGcPerRequest, against: 'broken', atMost: 1 / 3 },
    { metric: requestsPerSecond, against: 'broken', atLeast: 1 },
  ],
});
