// The debugging payload of one bank task: a network trace of every exchange the worker had with the bank,
// built deterministically from the task's seed so that the correctness probe can build it again and
// compare. Many small objects (headers, transactions), as a real trace has.

/** A small, fast PRNG (mulberry32): the same seed gives the same trace on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Transaction {
  id: string;
  date: string;
  amount: number;
  currency: string;
  description: string;
  category: string[];
  pending: boolean;
}

export interface Timings {
  dnsMs: number;
  connectMs: number;
  tlsMs: number;
  ttfbMs: number;
  totalMs: number;
}

/**
 * One line of the trace, at `t` milliseconds after the task started: a request sent, a read from the
 * socket (its size in bytes), a response complete, or a transaction parsed from a response.
 */
export type TraceEvent =
  | { t: number; request: { ex: number; method: 'GET' | 'POST'; url: string; headers: Record<string, string> } }
  | { t: number; read: number }
  | { t: number; response: { ex: number; status: number; headers: Record<string, string>; timings: Timings } }
  | { t: number; record: Transaction };

/** The debugging payload: the task's whole network trace, in order. */
export type DebugPayload = TraceEvent[];

export const EXCHANGES = Number(process.env.TRACE_EXCHANGES ?? 12);
export const READS_PER_EXCHANGE = Number(process.env.TRACE_READS ?? 120);
export const TRANSACTIONS_PER_PAGE = Number(process.env.TRACE_TRANSACTIONS ?? 10);

const BANKS = ['first-harbor', 'northwind-credit', 'bluebird-savings', 'cascade-federal', 'ironbridge'];
const MERCHANTS = ['Corner Grocer', 'City Transit', 'Blue Bottle', 'Hardware Depot', 'Payroll ACME Corp', 'Rent', 'Streaming+', 'Pharmacy 24', 'Fuel Stop', 'Book Nook'];
const CATEGORIES = [['Food and Drink', 'Groceries'], ['Travel', 'Public Transit'], ['Food and Drink', 'Coffee'], ['Shops', 'Hardware'], ['Transfer', 'Payroll'], ['Payment', 'Rent'], ['Service', 'Subscription'], ['Healthcare', 'Pharmacy'], ['Travel', 'Gas'], ['Shops', 'Books']];
const BASE_TIME = Date.UTC(2026, 0, 1);

function hex(next: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(next() * 0x100000000).toString(16).padStart(8, '0');
  return out.slice(0, length);
}

/** The debugging payload of the task with this seed. Pure: the same seed always gives the same payload. */
export function buildTrace(seed: number): DebugPayload {
  const next = random(seed);
  const bank = BANKS[seed % BANKS.length]!;
  const day = BASE_TIME + Math.floor(next() * 300) * 86_400_000;
  const accountId = `acc_${hex(next, 16)}`;
  const events: TraceEvent[] = [];
  let t = 0;
  let cursor = '';
  for (let ex = 0; ex < EXCHANGES; ex++) {
    const requestId = hex(next, 32);
    events.push({
      t,
      request: {
        ex,
        method: ex === 0 ? 'POST' : 'GET',
        url: `https://api.${bank}.example/v2/accounts/${accountId}/transactions${cursor ? `?cursor=${cursor}` : ''}`,
        headers: { accept: 'application/json', 'user-agent': 'bank-worker/7.3.1', 'x-request-id': requestId },
      },
    });
    const timings: Timings = {
      dnsMs: Math.round(next() * 5),
      connectMs: Math.round(next() * 30 + 5),
      tlsMs: Math.round(next() * 60 + 10),
      ttfbMs: Math.round(next() * 400 + 20),
      totalMs: 0,
    };
    t += timings.dnsMs + timings.connectMs + timings.tlsMs + timings.ttfbMs;
    for (let r = 0; r < READS_PER_EXCHANGE; r++) {
      t = Math.round((t + next() * 3) * 100) / 100;
      events.push({ t, read: r + 1 < READS_PER_EXCHANGE ? 1448 : Math.floor(next() * 1448) + 1 });
    }
    timings.totalMs = Math.round(t - timings.dnsMs);
    cursor = hex(next, 24);
    events.push({
      t,
      response: {
        ex,
        status: 200,
        headers: { 'content-type': 'application/json', 'x-request-id': requestId, 'x-next-cursor': cursor },
        timings,
      },
    });
    for (let j = 0; j < TRANSACTIONS_PER_PAGE; j++) {
      const k = Math.floor(next() * MERCHANTS.length);
      events.push({
        t,
        record: {
          id: `txn_${hex(next, 16)}`,
          date: new Date(day - Math.floor(next() * 90) * 86_400_000).toISOString().slice(0, 10),
          amount: ((k === 4 ? 1 : -1) * Math.round(next() * 250_000)) / 100,
          currency: 'USD',
          description: `${MERCHANTS[k]} #${Math.floor(next() * 9000) + 1000}`,
          category: CATEGORIES[k]!,
          pending: next() < 0.1,
        },
      });
    }
  }
  return events;
}

/** What the task reports back: counts and the net amount of the transactions it fetched. */
export interface TaskResult {
  exchanges: number;
  transactions: number;
  pending: number;
  netAmount: number;
}

export function summarize(trace: DebugPayload): TaskResult {
  let exchanges = 0;
  let transactions = 0;
  let pending = 0;
  let cents = 0;
  for (const event of trace) {
    if ('request' in event) exchanges++;
    if (!('record' in event)) continue;
    transactions++;
    if (event.record.pending) pending++;
    cents += Math.round(event.record.amount * 100);
  }
  return { exchanges, transactions, pending, netAmount: cents / 100 };
}
