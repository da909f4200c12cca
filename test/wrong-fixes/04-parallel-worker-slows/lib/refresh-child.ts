// The shipped refresh, unchanged, in a child process of its own (spawned by refreshes-in-a-child-process.ts
// without the probe's preloads). It answers refreshes asked for over its IPC channel.
import { Bank } from '../../../../exercises/04-parallel-worker-slows/bank.ts';

interface Transaction { id: string; account: string; amount: number; pending: boolean; [field: string]: unknown }
interface Page { statement_id: string; page: number; next_cursor: string | null; transactions: Transaction[] }

const bank = new Bank();

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

function summarize(statementId: string, pages: Page[]) {
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

process.on('message', async (message: { id: number }) => {
  const { statementId, pages } = await readStatement();
  process.send!({ id: message.id, summary: summarize(statementId, pages) });
});
process.send!({ ready: true });
process.on('disconnect', () => process.exit(0));
