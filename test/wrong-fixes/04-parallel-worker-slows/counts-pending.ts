// Wrong: folds each page as it arrives (the right shape for the GC) but adds pending transactions to the
// totals too, which the shipped server never did.
// probe: totals are the posted amounts per account, in cents
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Page {
  next_cursor: string | null;
  transactions: { account: string; amount: number; pending: boolean }[];
}

const bank = new Bank();
const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
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
      totals[t.account] = (totals[t.account] ?? 0) + Math.round(t.amount * 100);
    }
    cursor = page.next_cursor;
  }
  res.send({ statement_id, transactions, pending, totals });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
