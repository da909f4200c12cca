// Wrong: reads one statement, then answers every later refresh with its totals under the new statement's
// id, without reading the new pages. Caching a result across different inputs.
// probe: totals are the posted amounts per account, in cents
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Page {
  next_cursor: string | null;
  transactions: { account: string; amount: number; pending: boolean }[];
}
type Figures = { transactions: number; pending: number; totals: Record<string, number> };

const bank = new Bank();
let cached: Figures | undefined;

async function readAll(first: string): Promise<Figures> {
  const figures: Figures = { transactions: 0, pending: 0, totals: {} };
  let cursor: string | null = first;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    for (const t of page.transactions) {
      figures.transactions += 1;
      if (t.pending) figures.pending += 1;
      else figures.totals[t.account] = (figures.totals[t.account] ?? 0) + Math.round(t.amount * 100);
    }
    cursor = page.next_cursor;
  }
  return figures;
}

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const { statement_id, cursor } = await bank.openStatement();
  cached ??= await readAll(cursor);
  res.send({ statement_id, ...cached });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
