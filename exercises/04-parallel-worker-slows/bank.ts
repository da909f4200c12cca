// The bank: a stand-in for a slow upstream bank API that hands out an account holder's transactions as
// JSON, a page at a time. It is the network, not your code: do not change this file. The correctness
// probe rebuilds every page from the same deterministic generator and checks your totals against them.
//
// Each refresh opens a new statement (a new id, new transactions), and the pages must be read in order:
// each page names the cursor of the next one, and the bank only accepts cursors it issued.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pages in one statement. */
export const PAGES_PER_STATEMENT = 5;
/** Transactions on one page (~105 KB of JSON). */
export const TRANSACTIONS_PER_PAGE = 80;
/** The bank's round trip, per call: a refresh makes six calls, so it waits 24 ms on the bank in all. */
export const BANK_DELAY_MS = 4;

export const ACCOUNTS = ['acc_checking_1134', 'acc_savings_2047', 'acc_credit_5512', 'acc_joint_7780', 'acc_business_9021'] as const;

/** A small deterministic generator (mulberry32), so the bank and the probe agree on every page. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MERCHANTS = [
  ['BLUE BOTTLE COFFEE', 5814, 'in-store'],
  ['WHOLE FOODS MARKET', 5411, 'in-store'],
  ['SHELL OIL 57442', 5541, 'in-store'],
  ['UBER *TRIP HELP.UBER.COM', 4121, 'mobile-app'],
  ['NETFLIX.COM', 4899, 'online-web'],
  ['AMAZON MKTPL*2K4LR81', 5942, 'online-web'],
  ['DELTA AIR 0062358', 3058, 'online-web'],
  ['SPRINGFIELD UTILITIES', 4900, 'online-web'],
  ['PAYROLL ACME CORP', 0, 'ach'],
  ['TRADER JOES #552', 5411, 'in-store'],
  ['STARBUCKS STORE 10441', 5814, 'mobile-app'],
  ['THE HOME DEPOT #0611', 5200, 'in-store'],
] as const;
const CITIES = [
  ['SAN FRANCISCO', 'CA', '94103'],
  ['NEW YORK', 'NY', '10013'],
  ['AUSTIN', 'TX', '78701'],
  ['SEATTLE', 'WA', '98101'],
  ['CHICAGO', 'IL', '60601'],
  ['DENVER', 'CO', '80202'],
] as const;

/** How many distinct transactions the bank draws its pages from. */
export const POOL_SIZE = 600;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * One transaction in the bank's own export format: terse keys, values as the core banking system
 * writes them, and the history of the card payment (authorization, clearing, settlement, posting).
 * 1.2-1.4 KB of JSON, most of it short strings.
 */
function makeTransaction(random: () => number): Record<string, unknown> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const id = (length: number) => Array.from({ length }, () => BASE62[Math.floor(random() * 62)]).join('');
  const digits = (n: number) => String(Math.floor(random() * 10 ** n)).padStart(n, '0');
  const [merchant, mcc, channel] = pick(MERCHANTS);
  const [city, region, postal] = pick(CITIES);
  const credit = mcc === 0;
  const cents = Math.floor(random() * 25_000) + 1;
  const day = 1 + Math.floor(random() * 24);
  const at = (offset: number) =>
    `2026-10-${String(day + offset).padStart(2, '0')}T${String(Math.floor(random() * 24)).padStart(2, '0')}:${digits(2).replace(/^[6-9]/, '5')}:${digits(2).replace(/^[6-9]/, '0')}.${digits(3)}Z`;
  const event = (kind: string, offset: number) => ({
    kind,
    at: at(offset),
    ref: `${kind}-${id(14)}`,
    status: `${kind}_completed`,
    host: `core-${id(6)}.ledger.bank.internal`,
  });
  return {
    id: id(32),
    account: pick(ACCOUNTS),
    type: credit ? 'CREDIT' : pick(['DEBIT', 'POS', 'CHECKCARD']),
    amount: (credit ? cents * 10 : -cents) / 100,
    currency: 'USD',
    pending: random() < 0.1,
    posted: at(3),
    description: `${merchant} ${city} ${region}`,
    memo: `${credit ? 'ACH CREDIT' : 'CARD PURCHASE'} ${merchant} ${city} ${region} REF ${id(10)}`,
    payee: {
      name: merchant,
      address: `${digits(4)} MARKET STREET SUITE ${digits(3)}`,
      city,
      postal: `${postal}-${digits(4)}`,
      country: 'UNITED STATES OF AMERICA',
      phone: `+1-415-555-${digits(4)}`,
    },
    card: credit
      ? null
      : {
          masked: `XXXX-XXXX-XXXX-${digits(4)}`,
          network: pick(['VISA SIGNATURE', 'MASTERCARD WORLD ELITE', 'AMERICAN EXPRESS']),
          entry: pick(['CONTACTLESS_NFC', 'CHIP_AND_PIN', 'ECOMMERCE_3DS_V2']),
          auth_code: `AUTH-${id(10)}`,
        },
    events: [event('authorization', 0), event('clearing', 1), event('settlement', 2), event('posting', 3)],
    labels: [`mcc-${String(mcc).padStart(4, '0')}-${channel}`, `region-${city.toLowerCase().replace(' ', '-')}-${region.toLowerCase()}`, `channel-${channel}-v2`, `batch-${digits(8)}`],
  };
}

/** Every transaction the bank can send, serialized once at start (1.2-1.4 KB each). */
export const TRANSACTION_POOL: readonly string[] = (() => {
  const random = prng(20_261_129);
  return Array.from({ length: POOL_SIZE }, () => JSON.stringify(makeTransaction(random)));
})();

/** Which pool entries make up page `page` of statement `statement`: the same answer in every process. */
export function pageEntries(statement: number, page: number): number[] {
  const random = prng(statement * 7919 + page * 104_729 + 1);
  return Array.from({ length: TRANSACTIONS_PER_PAGE }, () => Math.floor(random() * POOL_SIZE));
}

export function statementId(statement: number): string {
  return `stmt_${statement}`;
}

/** Parses a statement id back to its number, or undefined when it is not one the bank issues. */
export function statementNumber(id: unknown): number | undefined {
  const match = typeof id === 'string' ? /^stmt_(\d{1,9})$/.exec(id) : null;
  return match ? Number(match[1]) : undefined;
}

/** The body of one page, as the bank sends it. */
function pageText(statement: number, page: number, nextCursor: string | null): string {
  const transactions = pageEntries(statement, page).map((i) => TRANSACTION_POOL[i]);
  return (
    `{"statement_id":"${statementId(statement)}","page":${page},"pages":${PAGES_PER_STATEMENT},` +
    `"next_cursor":${nextCursor === null ? 'null' : `"${nextCursor}"`},"transactions":[${transactions.join(',')}]}`
  );
}

export interface Statement {
  statement_id: string;
  /** The cursor of the first page. */
  cursor: string;
}

export class BankError extends Error {}

/** A connection to the bank. Each call waits one round trip. */
export class Bank {
  private nextStatement = 1;
  private readonly cursors = new Map<string, { statement: number; page: number }>();

  constructor(private readonly delayMs = BANK_DELAY_MS) {}

  private issueCursor(statement: number, page: number): string {
    const cursor = randomBytes(9).toString('base64url');
    this.cursors.set(cursor, { statement, page });
    return cursor;
  }

  /** Opens a new statement for the account holder: fresh transactions every time. */
  async openStatement(): Promise<Statement> {
    await sleep(this.delayMs);
    const statement = this.nextStatement++;
    return { statement_id: statementId(statement), cursor: this.issueCursor(statement, 0) };
  }

  /** One page of transactions as JSON text. Its next_cursor is null on the last page. */
  async fetchPage(cursor: string): Promise<string> {
    await sleep(this.delayMs);
    const position = this.cursors.get(cursor);
    if (!position) throw new BankError(`the bank does not know cursor ${JSON.stringify(cursor)}`);
    this.cursors.delete(cursor);
    const { statement, page } = position;
    const next = page + 1 < PAGES_PER_STATEMENT ? this.issueCursor(statement, page + 1) : null;
    return pageText(statement, page, next);
  }
}
