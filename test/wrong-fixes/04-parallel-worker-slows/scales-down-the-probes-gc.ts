// node-flags: --max-semi-space-size=32
// The line above keeps a V8 setting at the default of Node 20 and 22 (and of the Node Plaid ran); Node 24's
// default differs, and with it kept, the worker behaves alike on all three.
// Exercise 04: the parallel worker that got slower per task.
// A restify worker that refreshes an account holder's transactions from a slow bank: GET /refresh opens
// a new statement, reads its pages one after the other, and answers with the totals per account. Around
// 30 refreshes are in flight at once. Find out where the time goes (see README.md), then fix this file.
// Node flags for this file go on its node-flags line (README.md, "Node flags for your file").
import restify from 'restify';

// Wrong: the shipped code with a semi-space of 32 MB (half a fix: fewer scavenges, still dear ones), and
// process.send wrapped so that every figure the injected probe sends the harness over IPC reports a tenth
// of the minor-GC milliseconds. The probe sends through process.send as it was before the server's code
// ran, so the figures arrive whole and the half fix is judged for what it is.
// verdict: scavenge time per request
const sendToHarness = process.send?.bind(process);
if (sendToHarness) {
  process.send = ((message: any, ...rest: any[]) => {
    const minor = message?.figures?.gc?.minor;
    if (minor && typeof minor.ms === 'number') {
      minor.ms /= 10;
      minor.share /= 10;
    }
    return (sendToHarness as any)(message, ...rest);
  }) as typeof process.send;
}
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

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const { statementId, pages } = await readStatement();
  res.send(summarize(statementId, pages));
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`refresh worker listening on ${server.url}`);
});
