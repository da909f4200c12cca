// node-flags: --max-semi-space-size=16
// Wrong: opens the statement, then reads none of its pages: the answer is worked out from the bank
// stand-in's own generator (pageEntries and TRANSACTION_POOL, exported by bank.ts), each pool entry parsed
// once at start. The figures match what the pages would have said; no page is ever fetched or parsed, so
// there is nothing for the scavenger to collect, and it answers after one call to the bank, not six.
// Judged in the author check's run, in turns: beside the other known-wrong fixes' loads its answers may
// queue past the six calls' 24 ms.
// in-turns: a refresh waits on the bank 6 times
import restify from 'restify';
import { Bank, PAGES_PER_STATEMENT, TRANSACTION_POOL, pageEntries, statementNumber } from '../../../exercises/04-parallel-worker-slows/bank.ts';

const bank = new Bank();
const POOL = TRANSACTION_POOL.map((text) => {
  const t = JSON.parse(text) as { account: string; amount: number; pending: boolean };
  return { account: t.account, cents: Math.round(t.amount * 100), pending: t.pending };
});

const server = restify.createServer({ name: 'bank-refresh-worker' });

server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
  const { statement_id: statementId } = await bank.openStatement();
  const n = statementNumber(statementId)!;
  const totals: Record<string, number> = {};
  let pending = 0;
  let transactions = 0;
  for (let page = 0; page < PAGES_PER_STATEMENT; page++) {
    for (const index of pageEntries(n, page)) {
      const t = POOL[index]!;
      transactions += 1;
      if (t.pending) pending += 1;
      else totals[t.account] = (totals[t.account] ?? 0) + t.cents;
    }
  }
  res.send({ statement_id: statementId, transactions, pending, totals });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`refresh worker listening on ${server.url}`);
});
