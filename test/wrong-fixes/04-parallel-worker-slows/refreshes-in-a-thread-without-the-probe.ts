// node-flags: --max-semi-space-size=16
// Wrong: the shipped refresh, unchanged, moved into one worker thread started without the process's
// preloads (`execArgv: []`, tsx registered by hand), the probe among them: the pages pile up in the
// thread's young generation as before, in an isolate that reports nothing.
// under-load: worker threads the probe could not see
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import restify from 'restify';
import { Bank } from '../../../exercises/04-parallel-worker-slows/bank.ts';

interface Transaction {
  account: string;
  amount: number;
  pending: boolean;
}

interface Page {
  statement_id: string;
  next_cursor: string | null;
  transactions: Transaction[];
}

if (!isMainThread) {
  const bank = new Bank();
  parentPort!.on('message', async (id: number) => {
    // The shipped readStatement and summarize, as they were.
    const { statement_id: statementId, cursor: first } = await bank.openStatement();
    const pages: Page[] = [];
    let cursor: string | null = first;
    while (cursor !== null) {
      const page = JSON.parse(await bank.fetchPage(cursor)) as Page;
      pages.push(page);
      cursor = page.next_cursor;
    }
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
    parentPort!.postMessage({ id, summary: { statement_id: statementId, transactions: transactions.length, pending, totals } });
  });
} else {
  // No preloads; tsx registered by hand, so that this TypeScript file loads in the thread on Node 20 too.
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true, execArgv: [] });
  const waiting = new Map<number, (summary: unknown) => void>();
  let next = 0;
  worker.on('message', ({ id, summary }: { id: number; summary: unknown }) => {
    waiting.get(id)?.(summary);
    waiting.delete(id);
  });

  const server = restify.createServer({ name: 'bank-refresh-worker' });
  server.get('/refresh', async (req: restify.Request, res: restify.Response) => {
    const id = next++;
    const summary = await new Promise<unknown>((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage(id);
    });
    res.send(summary);
  });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
