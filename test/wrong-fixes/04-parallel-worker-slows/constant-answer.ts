// Wrong: answers every refresh with the summary of the first statement, id and all: a constant.
// probe: each refresh opens a new statement
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Page {
  next_cursor: string | null;
  transactions: { account: string; amount: number; pending: boolean }[];
}

const bank = new Bank();
let answer: object | undefined;

async function refresh(): Promise<object> {
  const { statement_id, cursor: first } = await bank.openStatement();
  const totals: Record<string, number> = {};
  let transactions = 0;
  let pending = 0;
  let cursor: string | null = first;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    for (const t of page.transactions) {
      transactions += 1;
      if (t.pending) pending += 1;
      else totals[t.account] = (totals[t.account] ?? 0) + Math.round(t.amount * 100);
    }
    cursor = page.next_cursor;
  }
  return { statement_id, transactions, pending, totals };
}

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  answer ??= await refresh();
  res.send(answer);
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
