// node-flags: --max-semi-space-size=16
// Wrong: the shipped refresh runs ahead of the requests, 6 at a time, into a buffer of up to 3,000 summaries;
// a request takes the oldest one. Few pages are alive at each scavenge, and most answers are ready when asked
// for, made while the other servers took their turns: its own turns pay for a fraction of the work.
// between-turns: between its turns
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Transaction {
  id: string;
  account: string;
  amount: number;
  pending: boolean;
  [field: string]: unknown;
}

interface Page {
  statement_id: string;
  page: number;
  next_cursor: string | null;
  transactions: Transaction[];
}

interface Summary {
  statement_id: string;
  transactions: number;
  pending: number;
  /** Posted (not pending) amounts per account, in cents. */
  totals: Record<string, number>;
}

const bank = new Bank();

/** Reads every page of a new statement, in order: each page names the next one. */
async function readStatement(): Promise<{ statementId: string; pages: Page[] }> {
  const { statement_id: statementId, cursor: first } = await bank.openStatement();
  const pages: Page[] = [];
  let cursor: string | null = first;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    pages.push(page);
    cursor = page.next_cursor;
  }
  return { statementId, pages };
}

function summarize(statementId: string, pages: Page[]): Summary {
  const transactions = pages.flatMap((page) => page.transactions);
  const totals: Record<string, number> = {};
  let pending = 0;
  for (const transaction of transactions) {
    if (transaction.pending) {
      pending += 1;
      continue;
    }
    totals[transaction.account] = (totals[transaction.account] ?? 0) + Math.round(transaction.amount * 100);
  }
  return { statement_id: statementId, transactions: transactions.length, pending, totals };
}

const server = restify.createServer({ name: 'bank-refresh-worker' });

// Refreshes are run ahead of the requests by a background loop, 6 at a time (few pages alive at
// each scavenge), into a buffer of up to 3,000 summaries; a request takes the oldest summary, or waits for
// the next one. The loop runs whenever the buffer is not full: while the other server takes its turn too.
const AHEAD = 6;
const MAX_BUFFERED = 3_000;
const ready: Summary[] = [];
const takers: ((summary: Summary) => void)[] = [];
let running = 0;
function produce(): void {
  while (running < AHEAD && ready.length + running < MAX_BUFFERED + takers.length) {
    running += 1;
    readStatement()
      .then(({ statementId, pages }) => {
        const summary = summarize(statementId, pages);
        const taker = takers.shift();
        if (taker) taker(summary);
        else ready.push(summary);
      })
      .catch(() => {})
      .finally(() => {
        running -= 1;
        setImmediate(produce);
      });
  }
}
function take(): Promise<Summary> {
  const summary = ready.shift();
  setImmediate(produce);
  if (summary) return Promise.resolve(summary);
  return new Promise((resolve) => takers.push(resolve));
}

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  res.send(await take());
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  produce();
  console.log(`refresh worker listening on ${server.url}`);
});
