import { randomBytes, randomUUID } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Expectations, expectSample, fetchResponse, type CheckResult, type Finding } from '../../scripts/check.ts';
import { defineExercise, type AfterLoadContext, type AnswerContract, type CheckContext } from '../../scripts/manifest.ts';
import { logFileService } from '../../scripts/services/log-file.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { drawnAtRandom } from '../../scripts/stats.ts';

const REDACTED = '[Redacted]';
const MESSAGES = ['task received', 'bank login', 'bank answered', 'transactions fetched', 'task done'];
/** How long the probe waits for log lines to reach the file (a logger may buffer and write later). */
const FLUSH_WAIT_MS = 5000;
/** A line's time is read as the moment it was logged: seconds off, not a minute. */
const CLOCK_SLACK_MS = 5000;
/** The bank (in server.ts) sends this many transactions per account, and the answer counts them. */
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

interface Sent {
  task: Task;
  bearer: string;
  requestId: string;
}

const b64 = (bytes: number) => randomBytes(bytes).toString('base64url');

/** A 16-digit card number that passes the Luhn check, as a real one would. */
function cardNumber(): string {
  const digits = [4, ...Array.from({ length: 14 }, () => Math.floor(Math.random() * 10))];
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Double every second digit counting from the check digit, which comes next.
    let d = digits[digits.length - 1 - i]!;
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.join('') + String((10 - (sum % 10)) % 10);
}

const INSTITUTIONS = [
  { id: 'ins_109508', name: 'First Platypus Bank' },
  { id: 'ins_109509', name: 'Tartan Bank' },
  { id: 'ins_109510', name: 'Houndstooth Bank' },
];

/** A refresh task as the scheduler sends it, with fresh secrets. */
function makeTask(accounts: number): Sent {
  const institution = INSTITUTIONS[Math.floor(Math.random() * INSTITUTIONS.length)]!;
  const task: Task = {
    taskId: `task_${b64(12)}`,
    institution,
    accessToken: `access-sandbox-${randomUUID()}`,
    credentials: {
      username: `user_${b64(6)}`,
      password: `pw_${b64(15)}`,
      mfa: { question: 'What was the name of your first pet?', answer: `pet_${b64(9)}` },
    },
    accounts: Array.from({ length: accounts }, (_, i) => {
      const number = cardNumber();
      return { id: `acc_${b64(12)}`, type: i === 0 ? 'depository' : 'credit', name: i === 0 ? 'Everyday Checking' : `Rewards Card ${i}`, mask: number.slice(-4), number };
    }),
  };
  return { task, bearer: b64(24), requestId: requestId() };
}

/**
 * A request id: a UUID, drawn again when a run of its digit groups could read as a card number (13 to 19
 * digits, as the shipped logger's pattern has it; about 1 UUID in 650): the probe would then fail the
 * shipped server for redacting what is no secret.
 */
function requestId(): string {
  for (;;) {
    const id = randomUUID();
    if (!/\b(?:\d[ -]?){12,18}\d\b/.test(id)) return id;
  }
}

function headersOf(sent: Sent): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${sent.bearer}`, 'x-request-id': sent.requestId };
}

/** The secrets of a task, each with where it is logged, for the failure messages. */
function secretsOf(sent: Sent): { label: string; value: string }[] {
  return [
    { label: 'the Authorization header (request.headers.authorization)', value: sent.bearer },
    { label: 'the access token (task.accessToken, accessToken)', value: sent.task.accessToken },
    { label: 'the password (task.credentials.password, credentials.password)', value: sent.task.credentials.password },
    { label: 'the MFA answer (task.credentials.mfa.answer, credentials.mfa.answer)', value: sent.task.credentials.mfa.answer },
    ...sent.task.accounts.map((a, i) => ({ label: `account ${i}'s number (task.accounts[${i}].number, accounts[${i}].number)`, value: a.number })),
  ];
}

// ---------------------------------------------------------------------------------------------------
// Reading the log
// ---------------------------------------------------------------------------------------------------

type Line = Record<string, unknown>;

function at(value: unknown, path: string): unknown {
  let here = value;
  for (const key of path.split('.')) {
    if (here === null || typeof here !== 'object') return undefined;
    here = (here as Record<string, unknown>)[key];
  }
  return here;
}

interface LogRead {
  text: string;
  lines: Line[];
  unparsable: string[];
}

async function readLog(file: string): Promise<LogRead> {
  const text = await readFile(file, 'utf8');
  const lines: Line[] = [];
  const unparsable: string[] = [];
  // Only complete lines: the last one may still be on its way.
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  for (const raw of complete.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) lines.push(parsed as Line);
      else unparsable.push(raw);
    } catch {
      unparsable.push(raw);
    }
  }
  return { text, lines, unparsable };
}

/** Reads the log until every task has written its last line, or the wait is over. */
async function readLogOf(file: string, taskIds: string[]): Promise<LogRead> {
  const deadline = Date.now() + FLUSH_WAIT_MS;
  for (;;) {
    const log = await readLog(file);
    const done = new Set(log.lines.filter((l) => l.msg === 'task done').map((l) => l.taskId));
    if (taskIds.every((t) => done.has(t)) || Date.now() > deadline) return log;
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------
// The correctness probe
// ---------------------------------------------------------------------------------------------------

function short(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 120);
}

/**
 * What the scheduler relies on in the answer to a task, the probe's and the load's alike: 200, JSON,
 * the task's id, each account with its mask and a balance, the count of the bank's transactions, and
 * none of the task's secrets.
 */
function answerFindings(status: number, contentType: string | null, json: unknown, text: string, sent: Sent): Finding[] {
  const { task } = sent;
  const body = (typeof json === 'object' && json !== null ? json : {}) as { taskId?: unknown; accounts?: unknown; transactions?: unknown };
  const accounts = Array.isArray(body.accounts) ? (body.accounts as unknown[]) : [];
  const transactions = TRANSACTIONS_PER_ACCOUNT * task.accounts.length;
  const leaked = secretsOf(sent).find((secret) => text.includes(secret.value));
  return [
    { ok: status === 200, what: 'POST /tasks answers 200', detail: `got ${status}: ${text.slice(0, 120)}` },
    { ok: /^application\/json\b/.test(contentType ?? ''), what: 'the answer is JSON with Content-Type application/json', detail: `got ${JSON.stringify(contentType)}` },
    { ok: body.taskId === task.taskId, what: 'the answer names its task', detail: `got ${short(body.taskId)}` },
    {
      ok:
        accounts.length === task.accounts.length &&
        task.accounts.every((a, j) => at(accounts[j], 'id') === a.id && at(accounts[j], 'mask') === a.mask && typeof at(accounts[j], 'balance.available') === 'number'),
      what: 'the answer lists each account with its mask and balance',
      detail: short(body.accounts),
    },
    {
      ok: body.transactions === transactions,
      what: `the answer counts the transactions the bank sent (${TRANSACTIONS_PER_ACCOUNT} per account)`,
      detail: `got ${short(body.transactions)}, expected ${transactions}`,
    },
    { ok: leaked === undefined, what: 'no secret is sent back in the answer', detail: leaked?.label },
  ];
}

/** When a task ran: a line's time must fall within it, give or take CLOCK_SLACK_MS. */
interface Span {
  from: number;
  to: number;
}

/**
 * What the log pipeline relies on in one of a task's lines: level, time, pid and hostname, and what its
 * message logs, the secrets shown as "[Redacted]". `count` is the transactions the task's answer counted;
 * `ran`, when known, is when the task ran.
 */
function lineFindings(line: Line, sent: Sent, count: number | undefined, ran?: Span): Finding[] {
  const { task } = sent;
  const findings: Finding[] = [];
  const check = (ok: boolean, what: string, detail?: string) => findings.push({ ok, what, ...(detail === undefined ? {} : { detail }) });
  const field = (path: string, expected: unknown, what: string) =>
    check(at(line, path) === expected, `"${line.msg}" logs ${what}`, `${path} is ${short(at(line, path))}, expected ${short(expected)}`);
  const redacted = (path: string) => check(at(line, path) === REDACTED, `"${line.msg}" shows ${path} as "${REDACTED}"`, `${path} is ${short(at(line, path))}`);

  // The institution and the credentials, as "task received" logs them within the task and "bank login" alone.
  const loginFields = (prefix: string) => {
    field(`${prefix}institution.id`, task.institution.id, 'the institution id');
    field(`${prefix}institution.name`, task.institution.name, 'the institution name');
    field(`${prefix}credentials.username`, task.credentials.username, 'the username');
    field(`${prefix}credentials.mfa.question`, task.credentials.mfa.question, 'the MFA question');
    redacted(`${prefix}credentials.password`);
    redacted(`${prefix}credentials.mfa.answer`);
  };

  const inTime = typeof line.time === 'number' && (!ran || (line.time >= ran.from - CLOCK_SLACK_MS && line.time <= ran.to + CLOCK_SLACK_MS));
  check(
    line.level === 30 && inTime && typeof line.pid === 'number' && typeof line.hostname === 'string',
    `every line has level 30 (info), time in ms${ran ? ' (when the task ran, give or take 5 s)' : ''}, pid and hostname`,
    short({ level: line.level, time: line.time, pid: line.pid, hostname: line.hostname }),
  );
  switch (line.msg) {
    case 'task received':
      field('request.method', 'POST', 'the request method');
      field('request.url', '/tasks', 'the request URL');
      field('request.headers.x-request-id', sent.requestId, "the request's x-request-id header");
      field('request.headers.content-type', 'application/json', "the request's content-type header");
      redacted('request.headers.authorization');
      field('task.taskId', task.taskId, 'the task id');
      loginFields('task.');
      redacted('task.accessToken');
      task.accounts.forEach((a, j) => {
        field(`task.accounts.${j}.id`, a.id, 'each account id');
        field(`task.accounts.${j}.mask`, a.mask, 'each account mask');
        field(`task.accounts.${j}.name`, a.name, 'each account name');
        redacted(`task.accounts.${j}.number`);
      });
      break;
    case 'bank login':
      loginFields('');
      break;
    case 'bank answered': {
      field('institution.id', task.institution.id, 'the institution id');
      field('status', 200, "the bank's status");
      check(typeof at(line, 'session.id') === 'string', '"bank answered" logs the session id', short(at(line, 'session')));
      redacted('session.token');
      const loggedAccounts = at(line, 'accounts');
      check(Array.isArray(loggedAccounts) && loggedAccounts.length === task.accounts.length, '"bank answered" logs every account', short(loggedAccounts));
      task.accounts.forEach((a, j) => {
        field(`accounts.${j}.id`, a.id, 'each account id');
        field(`accounts.${j}.mask`, a.mask, 'each account mask');
        field(`accounts.${j}.type`, a.type, 'each account type');
        check(typeof at(line, `accounts.${j}.balance.available`) === 'number', '"bank answered" logs each balance', short(at(line, `accounts.${j}`)));
        redacted(`accounts.${j}.number`);
      });
      break;
    }
    case 'transactions fetched': {
      field('count', count, 'how many transactions were fetched');
      redacted('accessToken');
      const logged = at(line, 'response.transactions');
      const accountIds = new Set(task.accounts.map((a) => a.id));
      check(
        Array.isArray(logged) &&
          logged.length === count &&
          typeof at(line, 'response.bytes') === 'number' &&
          logged.every(
            (t) =>
              typeof at(t, 'transaction_id') === 'string' &&
              accountIds.has(at(t, 'account_id') as string) &&
              typeof at(t, 'date') === 'string' &&
              typeof at(t, 'amount') === 'number' &&
              typeof at(t, 'name') === 'string' &&
              Array.isArray(at(t, 'category')) &&
              typeof at(t, 'pending') === 'boolean',
          ),
        '"transactions fetched" logs the page size and every transaction (transaction_id, account_id, date, amount, name, category, pending)',
        short(at(line, 'response')),
      );
      break;
    }
    case 'task done':
      check(typeof line.durationMs === 'number' && line.durationMs >= 0, '"task done" logs the duration', short(line.durationMs));
      field('accounts', task.accounts.length, 'how many accounts');
      field('transactions', count, 'how many transactions');
      break;
    default:
      check(false, `every line is one of the task's ${MESSAGES.length} (${MESSAGES.join(', ')})`, `msg ${short(line.msg)}`);
  }
  return findings;
}

async function check(baseUrl: string, { services }: CheckContext): Promise<CheckResult> {
  const expect = new Expectations();
  const logFile = services.get(LOG_FILE);
  if (!expect.expect(Boolean(logFile), 'the harness gave the server a log file (LOG_FILE)')) return expect.result();

  const sent = [makeTask(1), makeTask(2), makeTask(3), makeTask(2)];
  const sentAt = Date.now();
  const answers = await Promise.all(
    sent.map((s) => fetchResponse(`${baseUrl}/tasks`, { method: 'POST', headers: headersOf(s), body: JSON.stringify(s.task) })),
  );
  const answeredAt = Date.now();

  // The answers
  const counts = new Map<string, number>();
  answers.forEach((answer, i) => {
    for (const { ok, what, detail } of answerFindings(answer.status, answer.headers.get('content-type'), answer.json, answer.text, sent[i]!)) expect.expect(ok, what, detail);
    const { transactions } = (answer.json ?? {}) as { transactions?: unknown };
    counts.set(sent[i]!.task.taskId, typeof transactions === 'number' ? transactions : -1);
  });

  // The log
  const log = await readLogOf(logFile!, sent.map((s) => s.task.taskId));
  expect.expect(log.unparsable.length === 0, 'every log line is one JSON object', `not JSON: ${log.unparsable[0]?.slice(0, 120)}`);
  for (const s of sent) {
    for (const secret of secretsOf(s)) {
      const where = log.text.indexOf(secret.value);
      expect.expect(where < 0, `no secret appears in the log: ${secret.label}`, `found at byte ${where}: ...${log.text.slice(Math.max(0, where - 60), where + secret.value.length + 10)}...`);
    }
  }

  for (const [i, s] of sent.entries()) {
    const lines = log.lines.filter((l) => l.taskId === s.task.taskId);
    const found = lines.map((l) => l.msg);
    const complete = expect.expect(
      found.length === MESSAGES.length && MESSAGES.every((m, j) => found[j] === m),
      `every task writes its ${MESSAGES.length} lines, in order (${MESSAGES.join(', ')})`,
      `task ${i} wrote ${short(found)}`,
    );
    if (!complete) continue;
    for (const line of lines) {
      for (const { ok, what, detail } of lineFindings(line, s, counts.get(s.task.taskId), { from: sentAt, to: answeredAt })) expect.expect(ok, what, detail);
    }
  }
  return expect.result();
}

// ---------------------------------------------------------------------------------------------------
// After the load: every task the load got an answer for has its lines in the log, whole as the probe's,
// and no secret of the load's task is there. (A logger that keeps up only by writing less is not faster.)
// ---------------------------------------------------------------------------------------------------

const LOAD = makeTask(2);
/** The transactions the bank sends for the load's task, and its answer counts. */
const LOAD_TRANSACTIONS = TRANSACTIONS_PER_ACCOUNT * LOAD.task.accounts.length;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The load sends one task again and again; each run asks the bank again, which draws new balances. The
 * balances seen twice are a task answered without the bank (4 figures of 500,001 values each: no honest
 * repeat among a few hundred answers).
 */
const contract: AnswerContract = {
  check: (answer) =>
    answerFindings(answer.status, answer.headers['content-type'] ?? null, parseJson(answer.body), answer.body, LOAD)
      .filter((f) => !f.ok)
      .map((f) => f.what),
  distinct: (answer) => {
    const accounts = (parseJson(answer.body) as { accounts?: unknown } | undefined)?.accounts;
    if (!Array.isArray(accounts)) return undefined;
    return accounts.map((a) => `${short(at(a, 'balance.available'))}/${short(at(a, 'balance.current'))}`).join(' ');
  },
  distinctWhat: 'the set of balances',
};

async function countLines(file: string): Promise<number> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    let lines = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return lines;
      for (let i = buffer.indexOf(10, 0); i >= 0 && i < bytesRead; i = buffer.indexOf(10, i + 1)) lines++;
    }
  } finally {
    await handle.close();
  }
}

/**
 * A field that no two runs of the load's task log alike: each run logs in to the bank anew, and the
 * session names its transactions. The same value in two lines is a line kept and written again.
 */
const OWN_TO_EACH_RUN: Record<string, string> = {
  'bank answered': 'session.id',
  // Every transaction's: a line may not log its first and then those of an earlier run.
  'transactions fetched': 'response.transactions.*.transaction_id',
};

/** The values at `path` in a line; a `*` in it stands for each item of the array there. */
function valuesAt(line: unknown, path: string): unknown[] {
  const [before, after] = path.split('.*.');
  if (after === undefined) return [at(line, path)];
  const items = at(line, before!);
  return Array.isArray(items) ? items.map((item) => at(item, after)) : [undefined];
}

/** How many of the load's log lines the check after the load reads whole, drawn at random. */
const LOAD_LINES_READ = 500;

/** Where each complete line naming `taskId` starts and ends in the log: every line of a task names its id. */
function linesNaming(log: Buffer, taskId: string): Array<[number, number]> {
  const id = Buffer.from(taskId);
  const spans: Array<[number, number]> = [];
  for (let hit = log.indexOf(id); hit >= 0; ) {
    const end = log.indexOf(10, hit);
    // The last line may still be on its way.
    if (end < 0) break;
    spans.push([log.lastIndexOf(10, hit) + 1, end]);
    hit = log.indexOf(id, end);
  }
  return spans;
}

async function afterLoad({ services, answered }: AfterLoadContext): Promise<CheckResult> {
  const expect = new Expectations();
  const logFile = services.get(LOG_FILE)!;
  const wanted = answered * MESSAGES.length;
  const deadline = Date.now() + FLUSH_WAIT_MS;
  let lines = await countLines(logFile);
  while (lines < wanted && Date.now() < deadline) {
    await sleep(200);
    lines = await countLines(logFile);
  }
  const log = await readFile(logFile);
  const loadLines = linesNaming(log, LOAD.task.taskId);
  expect.expect(
    loadLines.length >= wanted,
    `every task under load wrote its ${MESSAGES.length} lines`,
    `${answered} tasks answered, ${loadLines.length} lines naming the load's task in the log, expected at least ${wanted}`,
  );
  // Five lines a task, and one of each message: not five of the cheapest.
  const byMessage = new Map(MESSAGES.map((msg) => [msg, 0]));
  for (const [start, end] of loadLines) {
    const msg = /"msg":\s*"([^"]*)"/.exec(log.toString('utf8', start, end))?.[1];
    if (msg !== undefined && byMessage.has(msg)) byMessage.set(msg, byMessage.get(msg)! + 1);
  }
  const short = MESSAGES.filter((msg) => byMessage.get(msg)! < answered);
  expect.expect(
    short.length === 0,
    `every task under load wrote each of its ${MESSAGES.length} messages`,
    `${answered} tasks answered, and fewer lines than that of ${short.map((msg) => `"${msg}" (${byMessage.get(msg)})`).join(', ')}`,
  );
  for (const secret of secretsOf(LOAD)) {
    expect.expect(log.indexOf(secret.value) < 0, `no secret of the load's task appears in the log: ${secret.label}`);
  }

  // A logger that keeps up by writing less while it is loaded writes whole lines for the probe: the
  // load's own lines are held to what the probe holds a task's lines to, a sample of them read whole.
  const drawn = new Map<string, unknown[]>(Object.keys(OWN_TO_EACH_RUN).map((msg) => [msg, []]));
  const read = drawnAtRandom(loadLines, LOAD_LINES_READ).map(([start, end]) => {
    const line = parseJson(log.toString('utf8', start, end));
    if (line !== null && typeof line === 'object' && !Array.isArray(line)) {
      const msg = String((line as Line).msg);
      if (Object.hasOwn(OWN_TO_EACH_RUN, msg)) drawn.get(msg)!.push(...valuesAt(line, OWN_TO_EACH_RUN[msg]!));
      return lineFindings(line as Line, LOAD, LOAD_TRANSACTIONS);
    }
    return [{ ok: false, what: 'every log line is one JSON object', detail: log.toString('utf8', start, Math.min(end, start + 120)) }];
  });
  expectSample(
    expect,
    `the load's log lines say what the probe's do (${read.length} of its ${loadLines.length.toLocaleString('en-US')} lines read whole, drawn at random)`,
    read,
  );
  for (const [msg, values] of drawn) {
    const repeated = values.length - new Set(values.map((value) => JSON.stringify(value))).size;
    expect.expect(
      repeated === 0,
      `each "${msg}" line of the load logs what its own run got (${OWN_TO_EACH_RUN[msg]}: ${values.length} read in the sample, no value twice)`,
      `${repeated} of the ${values.length} read repeated a ${OWN_TO_EACH_RUN[msg]} another line had logged: lines kept from an earlier run, logged again`,
    );
  }
  return expect.result();
}

/** An empty file per server run, named in LOG_FILE. */
const LOG_FILE = logFileService();

export default defineExercise({
  id: '05-waiting-worker-busy-cpu',
  title: 'The waiting worker that keeps its CPU busy',
  caseStudy: {
    company: 'Plaid',
    article: 'How we parallelized our Node.js service by 30x (German translation)',
    source: 'shared/seeds/000_c44225373a6ac297.txt',
  },
  serverFile: 'server.ts',
  shippedFile: '0-as-shipped.ts',
  services: [LOG_FILE],
  load: {
    path: '/tasks',
    method: 'POST',
    body: JSON.stringify(LOAD.task),
    headers: headersOf(LOAD),
    connections: 60,
    warmupSeconds: 1,
    durationSeconds: 6,
    // The verdict's turns at 80: at 60, the bank's 20 ms caps any worker at 3,000 tasks/s, close to what the
    // shipped server reaches on Node 22 and later (see the solution's README). The doctor keeps 60. At least
    // 6 rounds: one turn's figure is noisy here, and a median of 4 let identical servers read far apart (see the brief).
    turns: { connections: 80, minRounds: 6 },
  },
  check,
  contract,
  afterLoad,
  goal: [{ metric: requestsPerSecond, against: 'broken', atLeast: 1.6 }],
});
