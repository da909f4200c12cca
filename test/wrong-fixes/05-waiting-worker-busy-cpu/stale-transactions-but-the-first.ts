// Wrong: stage 1 (pino with redaction paths), except that a task run again (the load sends one task again
// and again) logs in "transactions fetched" its own first transaction and then the other 49 of the task's
// first run: the line names this run's session in its first transaction, and every later one is stale
// (another session's ids, amounts the bank did not send this time).
// after-load: lines kept from an earlier run
// Exercise 05, stage 1: pino with redaction paths.
// Why and what it measured: solutions/05-waiting-worker-busy-cpu/README.md.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import restify from 'restify';

// ---------------------------------------------------------------------------------------------------
// The log: pino. One JSON object per line; the secrets are named by their paths once, at start-up, and
// pino's redaction replaces exactly those with "[Redacted]" as it serializes each line.
// ---------------------------------------------------------------------------------------------------

const log = pino(
  {
    redact: {
      paths: [
        'request.headers.authorization',
        'task.accessToken',
        'task.credentials.password',
        'task.credentials.mfa.answer',
        'task.accounts[*].number',
        'credentials.password',
        'credentials.mfa.answer',
        'session.token',
        'accounts[*].number',
        'accessToken',
      ],
      censor: '[Redacted]',
    },
  },
  // Log lines go to LOG_FILE when it is set (the workshop sets it), else to stdout.
  pino.destination(process.env.LOG_FILE ?? 1),
);

// ---------------------------------------------------------------------------------------------------
// The bank. Its answers take BANK_LATENCY_MS, as a real bank's API does (and much longer on a bad day).
// ---------------------------------------------------------------------------------------------------

const BANK_LATENCY_MS = 20;
const TRANSACTIONS_PER_ACCOUNT = 25;

interface Account {
  id: string;
  type: string;
  name: string;
  mask: string;
  number: string;
}

interface Task {
  taskId: string;
  institution: { id: string; name: string };
  accessToken: string;
  credentials: { username: string; password: string; mfa: { question: string; answer: string } };
  accounts: Account[];
}

interface Transaction {
  transaction_id: string;
  account_id: string;
  date: string;
  amount: number;
  iso_currency_code: string;
  name: string;
  category: string[];
  pending: boolean;
}

interface BankAnswer {
  status: number;
  session: { id: string; token: string };
  accounts: (Account & { balance: { available: number; current: number; currency: string } })[];
  /** The transactions page as it came over the wire: JSON text. */
  transactionsPage: string;
}

const MERCHANTS: [string, string[]][] = [
  ['Blue Bottle Coffee', ['Food and Drink', 'Coffee Shop']],
  ['City Transit', ['Travel', 'Public Transportation']],
  ['Corner Grocery', ['Shops', 'Supermarkets and Groceries']],
  ['Payroll ACME Corp', ['Transfer', 'Payroll']],
  ['Electric Utility', ['Service', 'Utilities']],
  ['Online Books', ['Shops', 'Bookstores']],
];

let sessions = 0;

function cents(max: number): number {
  return Math.round(Math.random() * max * 100) / 100;
}

async function bankRefresh(task: Task): Promise<BankAnswer> {
  await sleep(BANK_LATENCY_MS);
  const session = { id: `ses_${(++sessions).toString(36)}_${process.pid}`, token: randomBytes(24).toString('base64url') };
  const accounts = task.accounts.map((account) => ({
    ...account,
    balance: { available: cents(5000), current: cents(5000), currency: 'USD' },
  }));
  const transactions: Transaction[] = [];
  for (const account of task.accounts) {
    for (let i = 0; i < TRANSACTIONS_PER_ACCOUNT; i++) {
      const [name, category] = MERCHANTS[(i + account.id.length) % MERCHANTS.length]!;
      transactions.push({
        transaction_id: `tx_${session.id}_${transactions.length}`,
        account_id: account.id,
        date: `2026-11-${String(28 - (i % 28)).padStart(2, '0')}`,
        amount: cents(200),
        iso_currency_code: 'USD',
        name,
        category,
        pending: i === 0,
      });
    }
  }
  const transactionsPage = JSON.stringify({ transactions, total_transactions: transactions.length, request_id: session.id });
  return { status: 200, session, accounts, transactionsPage };
}

// ---------------------------------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------------------------------

const firstRun = new Map<string, Transaction[]>();
const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.bodyParser());

server.post('/tasks', async (req: restify.Request, res: restify.Response) => {
  const started = Date.now();
  const task = req.body as Task;
  if (!task || typeof task.taskId !== 'string' || !Array.isArray(task.accounts) || !task.credentials || !task.institution) {
    res.send(400, { message: 'a task needs taskId, institution, credentials and accounts' });
    return;
  }
  const { taskId, institution } = task;
  log.info({ taskId, request: { method: req.method, url: req.url, headers: req.headers }, task }, 'task received');

  log.info({ taskId, institution, credentials: task.credentials }, 'bank login');
  const answer = await bankRefresh(task);
  log.info({ taskId, institution: { id: institution.id }, status: answer.status, session: answer.session, accounts: answer.accounts }, 'bank answered');

  const page = JSON.parse(answer.transactionsPage) as { transactions: Transaction[] };
  const { transactions } = page;
  // The first run of a task keeps its page; later runs log their own first transaction, then the first run's others.
  const kept = firstRun.get(taskId);
  if (!kept) firstRun.set(taskId, transactions.slice(1));
  const logged = kept ? [transactions[0]!, ...kept] : transactions;
  // The whole page goes to the log: with it, an engineer can replay the task on their own machine.
  log.info(
    { taskId, accessToken: task.accessToken, count: transactions.length, response: { bytes: answer.transactionsPage.length, transactions: logged } },
    'transactions fetched',
  );

  log.info({ taskId, durationMs: Date.now() - started, accounts: answer.accounts.length, transactions: transactions.length }, 'task done');
  res.send({
    taskId,
    accounts: answer.accounts.map((account) => ({ id: account.id, mask: account.mask, balance: account.balance })),
    transactions: transactions.length,
  });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`bank worker listening on ${server.url}`);
});
