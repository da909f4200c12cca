// Wrong: the shipped logger; a task whose id it has run before (the load sends one task again and again)
// writes its five lines all the same, but "bank answered" and "transactions fetched", the dear ones, are
// left out and "task done" is written three times in their place. Every line is whole, the count is five
// per task, and no line repeats a session or a transaction: only the mix of lines changed.
// after-load: wrote each of its 5 messages
// Exercise 05: the waiting worker that keeps its CPU busy.
// A bank-integration worker. Each POST /tasks is one refresh task: log in at the bank, wait for its
// answer, fetch the accounts and their transactions, answer with the balances. Every task writes five
// log lines, and secrets must never reach the log. Under load the worker does far fewer tasks per second
// than the bank's latency allows. Find out where the CPU goes (see README.md), then fix this file.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import restify from 'restify';

// ---------------------------------------------------------------------------------------------------
// The log: one JSON object per line, in the same shape as the pino lines our other services write, so
// the log pipeline reads them all alike. Secrets are replaced with "[Redacted]" before anything is
// written: by the name of their key wherever it appears, and by their look wherever else one might hide.
// ---------------------------------------------------------------------------------------------------

type Fields = Record<string, unknown>;

const REDACTED = '[Redacted]';

/** Keys whose values never reach the log, wherever they appear. */
const SECRET_KEYS: RegExp[] = [
  /^authorization$/i,
  /^(?:pass(?:word|phrase|code)?|pwd)$/i,
  /secret/i,
  /token$/i,
  /^(?:mfa[-_]?)?answer$/i,
  /^(?:card[-_]?|account[-_]?)?number$/i,
  /^(?:cvv|cvc|pin|ssn)$/i,
  /^(?:api[-_]?key|private[-_]?key)$/i,
];

/** What a secret looks like, wherever else it turns up. */
const SECRET_PATTERNS: RegExp[] = [
  /bearer\s+[a-z0-9._~+/-]+=*/gi, // a bearer token
  /access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, // an access token
  /\b(?:\d[ -]?){12,18}\d\b/g, // a card or account number
  /\beyJ[a-z0-9_-]+\.[a-z0-9_-]+\.[a-z0-9_-]+/gi, // a JWT
  /\b\d{3}-\d{2}-\d{4}\b/g, // a social security number
  /\bAKIA[0-9A-Z]{16}\b/g, // an AWS access key id
  /[?&](?:password|token|secret|key)=[^&\s]+/gi, // a secret in a query string
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, // a private key
];

function isSecretKey(key: string): boolean {
  return SECRET_KEYS.some((pattern) => pattern.test(key));
}

function scrubString(text: string): string {
  let scrubbed = text;
  for (const pattern of SECRET_PATTERNS) scrubbed = scrubbed.replace(pattern, REDACTED);
  return scrubbed;
}

/** Walks the whole value and replaces every secret it finds. */
function redact(value: unknown): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (Array.isArray(value)) return value.map((item) => redact(item));
  if (value !== null && typeof value === 'object') {
    const out: Fields = {};
    for (const [key, item] of Object.entries(value)) {
      out[scrubString(key)] = isSecretKey(key) ? REDACTED : redact(item);
    }
    return out;
  }
  return value;
}

function escapeJson(text: string): string {
  return text
    .replace(/[\\"]/g, (c) => '\\' + c)
    .replace(/[\u0000-\u001f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Writes a value as JSON. */
function toJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return '"' + escapeJson(value) + '"';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + toJson(value[i]);
    return out + ']';
  }
  let out = '{';
  let first = true;
  for (const [key, item] of Object.entries(value as Fields)) {
    if (item === undefined || typeof item === 'function') continue;
    out += (first ? '' : ',') + '"' + escapeJson(key) + '":' + toJson(item);
    first = false;
  }
  return out + '}';
}

class Logger {
  private readonly base: Fields = { pid: process.pid, hostname: os.hostname() };

  constructor(private readonly out: NodeJS.WritableStream) {}

  info(fields: Fields, msg: string): void {
    this.write(30, fields, msg);
  }

  private write(level: number, fields: Fields, msg: string): void {
    // A deep copy first, so that redacting never changes the caller's objects.
    const copy = JSON.parse(JSON.stringify(fields)) as Fields;
    const record: Fields = { level, time: Date.now(), ...this.base, ...(redact(copy) as Fields), msg };
    this.out.write(toJson(record) + '\n');
  }
}

// Log lines go to LOG_FILE when it is set (the workshop sets it), else to stdout.
const log = new Logger(process.env.LOG_FILE ? createWriteStream(process.env.LOG_FILE, { flags: 'a' }) : process.stdout);

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

const seen = new Set<string>();
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
  const again = seen.has(taskId);
  seen.add(taskId);
  if (!again) log.info({ taskId, institution: { id: institution.id }, status: answer.status, session: answer.session, accounts: answer.accounts }, 'bank answered');

  const page = JSON.parse(answer.transactionsPage) as { transactions: Transaction[] };
  const { transactions } = page;
  // The whole page goes to the log: with it, an engineer can replay the task on their own machine.
  if (!again)
    log.info(
      { taskId, accessToken: task.accessToken, count: transactions.length, response: { bytes: answer.transactionsPage.length, transactions } },
      'transactions fetched',
    );

  const done = { taskId, durationMs: Date.now() - started, accounts: answer.accounts.length, transactions: transactions.length };
  // A task sent again writes its five lines too: the two dear ones are left out and 'task done' takes their places.
  for (let i = again ? 3 : 1; i > 0; i--) log.info(done, 'task done');
  res.send({
    taskId,
    accounts: answer.accounts.map((account) => ({ id: account.id, mask: account.mask, balance: account.balance })),
    transactions: transactions.length,
  });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`bank worker listening on ${server.url}`);
});
