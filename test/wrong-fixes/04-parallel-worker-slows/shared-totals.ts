// Wrong: "reuse objects" taken too far. One summary object is reset and refilled by every refresh, so no
// refresh allocates one; but 30 refreshes are in flight at once and they all write into it. Right when the
// probe asks one at a time, wrong as soon as refreshes overlap.
// probe: totals stay right when refreshes overlap
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Page {
  next_cursor: string | null;
  transactions: { account: string; amount: number; pending: boolean }[];
}

const bank = new Bank();
const shared = { statement_id: '', transactions: 0, pending: 0, totals: {} as Record<string, number> };

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const { statement_id, cursor: first } = await bank.openStatement();
  shared.statement_id = statement_id;
  shared.transactions = 0;
  shared.pending = 0;
  for (const account of Object.keys(shared.totals)) delete shared.totals[account];
  let cursor: string | null = first;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    for (const t of page.transactions) {
      shared.transactions += 1;
      if (t.pending) shared.pending += 1;
      else shared.totals[t.account] = (shared.totals[t.account] ?? 0) + Math.round(t.amount * 100);
    }
    cursor = page.next_cursor;
  }
  res.send({ ...shared, statement_id, totals: { ...shared.totals } });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
