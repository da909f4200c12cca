// Wrong: sums the first page and stops, so most transactions are never counted. Fast, and GC-quiet.
// probe: transactions counts every transaction
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Page {
  next_cursor: string | null;
  transactions: { account: string; amount: number; pending: boolean }[];
}

const bank = new Bank();
const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const { statement_id, cursor } = await bank.openStatement();
  const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
  const totals: Record<string, number> = {};
  let pending = 0;
  for (const t of page.transactions) {
    if (t.pending) pending += 1;
    else totals[t.account] = (totals[t.account] ?? 0) + Math.round(t.amount * 100);
  }
  res.send({ statement_id, transactions: page.transactions.length, pending, totals });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
