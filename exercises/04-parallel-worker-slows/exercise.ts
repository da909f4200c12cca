import { Expectations, fetchResponse, type CheckResult } from '../../scripts/check.ts';
import { defineExercise, type AnswerContract } from '../../scripts/manifest.ts';
import { PAGES_PER_STATEMENT, TRANSACTION_POOL, TRANSACTIONS_PER_PAGE, pageEntries, statementNumber } from './bank.ts';

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
    return keys.filter((key) => !ok[key]).map((key) => WHAT[key]);
  },
  distinct: (answer) => {
    const id = (parseJson(answer.body) as { statement_id?: unknown } | undefined)?.statement_id;
    return typeof id === 'string' ? id : undefined;
  },
  distinctWhat: 'the statement id',
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
  stages: [
    {
      file: '1-bigger-semi-space.ts',
      title: 'bigger semi-space',
      changes:
        "The code is the shipped code; only the Node flag changes: `// node-flags: --max-semi-space-size=256` instead of the shipped 16. A scavenge costs what survives it, and with 16 MB semi-spaces (the default here) every scavenge found ~30 refreshes' parsed pages still alive, copied them, and promoted them to the old generation. With 256 MB the young generation fills about sixteen times less often, and most pages belong to refreshes that have already answered. 64 MB is not enough here: the 30 refreshes in flight allocate about that much while one of them runs; 128 MB usually is, but not always (when refreshes slow down, their pages outlive a scavenge and get promoted, and the scavenges get dearer still). The price is memory (RSS ~620 MB instead of ~290 MB).",
      targets: [
        { metric: 'minorGcPerRequest', against: 'broken', atMost: 1 / 3 },
        { metric: 'requestsPerSecond', against: 'broken', atLeast: 1.1 },
      ],
      nodeMajors: [20],
      otherVersions:
        'measured on Node 22.23.5, a bigger semi-space makes scavenges rarer but each one dearer: the minor-GC share stays at 19-22% for 64, 128 and 256 MB (28% at 16 MB), and req/s gains ~1.15x. On Node 24.22.3 it held in one author check (3.7%, 0.10x) and tipped over in the next (22.6% in 21 scavenges, 0.77x the broken server\'s scavenge time per request, 6 major GCs): pages outlive a scavenge, get promoted, and each scavenge gets dearer. Stage 2 holds on both.',
    },
    {
      file: '2-keep-only-the-totals.ts',
      title: 'keep only the totals',
      changes:
        'Back to the shipped 16 MB semi-space, and the code allocates less instead: each page is folded into the refresh\'s running totals as soon as it is parsed, and the parsed page is dropped before the next wait on the bank. A scavenge now finds little alive but the page being parsed, so it has almost nothing to copy. Same throughput as stage 1 without the flag and without its memory; no flatMap copy of the transactions either.',
      targets: [
        { metric: 'minorGcPerRequest', against: 'broken', atMost: 1 / 3 },
        { metric: 'requestsPerSecond', against: 'broken', atLeast: 1.1 },
      ],
    },
  ],
  goal: [
    { metric: 'minorGcPerRequest', against: 'broken', atMost: 1 / 3 },
    { metric: 'requestsPerSecond', against: 'broken', atLeast: 1.1 },
  ],
  profile: {
    lookFor:
      "Use cpu or flame: `(garbage collector)` is the widest frame, over 40% of the samples here, and these are scavenges, the young generation's collector. The server's own hottest frame is `readStatement`, whose self time is `JSON.parse` of each page; it keeps every parsed page until the last one arrives, so each scavenge finds them alive and copies them. The share of wall time in scavenges is exact in the runtime table of `run 04 --load`.",
  },
  hints: [
    'Load it (`npm run workshop -- run 04 --load`) and read the runtime table under the req/s figures. One column is far from what a worker that mostly waits on a bank should show. How many of them per second, and what share of the time?',
    '"minor GC" is the scavenger, which collects the young generation. In the `--trace-gc` lines (see the brief), look at what each `Scavenge` frees: a few MB per scavenge, and long pauses, mean that most of what was young was still alive when it ran. A scavenge costs what is still alive when it runs, not what died: garbage is free, survivors are copied. What is still alive?',
    'Which objects does a refresh keep alive across its waits on the bank, and how many refreshes are in flight at once? Plaid found the same: each task held on to the data it had fetched while it waited for the bank again, so a scavenge found most of the young objects still alive and had to copy them. Read `readStatement`: what does it keep until the last page has arrived?',
    'The article\'s first fix was a flag. The first line of server.ts, `// node-flags: --max-semi-space-size=16`, pins the young generation\'s semi-space at 16 MB, the default of Node 20 and 22 (Node 24 starts with a larger one, and there the shipped worker spends ~12% of its time in scavenges instead of ~30%). Raising it with `--max-semi-space-size=1024` cut Plaid\'s scavenge time from 30% to 2%: a bigger young generation fills less often, so more of what it holds is dead by then. Stage 1 of the solution changes only this line. Try 32, 64, 128 and 256 (in MB) and watch the "minor GC (n)" column and the process\'s memory. Why is 64 not enough here?',
    'The fix that needs no bigger young generation, and Plaid\'s closing advice: learn how V8 allocates, and reuse or drop objects instead of keeping them. Here, drop: one object reused by 30 refreshes in flight at once is a race. The answer needs a handful of numbers, not the pages. Fold each page into the running totals right after JSON.parse, and let the page go before the next `await`.',
  ],
});
