// node-flags: --max-semi-space-size=16
// Wrong: once it has done 30 refreshes, each refresh stops after the first 3 of the statement's 5 pages:
// fewer pages parsed, less garbage, and every answer from then on misses two pages of transactions.
// under-load: transactions counts every transaction on all 5 pages
import restify from 'restify';
// The slow bank (bank.ts, not yours to change). The path is written so it also works from solutions/.
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

/** Adds one page to the running summary; the page itself can be collected as soon as this returns. */
function addPage(summary: Summary, page: Page): void {
  const { totals } = summary;
  for (const transaction of page.transactions) {
    summary.transactions += 1;
    if (transaction.pending) {
      summary.pending += 1;
      continue;
    }
    totals[transaction.account] = (totals[transaction.account] ?? 0) + Math.round(transaction.amount * 100);
  }
}

let refreshes = 0;

/** Reads every page of a new statement, in order, keeping nothing of a page but its totals and its cursor. */
async function refresh(): Promise<Summary> {
  const { statement_id: statementId, cursor: first } = await bank.openStatement();
  const summary: Summary = { statement_id: statementId, transactions: 0, pending: 0, totals: {} };
  let cursor: string | null = first;
  let pages = 0;
  const busy = ++refreshes > 30;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    addPage(summary, page);
    cursor = busy && ++pages >= 3 ? null : page.next_cursor; // busy: the first pages are the recent ones
  }
  return summary;
}

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  res.send(await refresh());
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`refresh worker listening on ${server.url}`);
});
