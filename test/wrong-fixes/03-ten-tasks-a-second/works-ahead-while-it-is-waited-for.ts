// Wrong: the shipped serializer, unchanged, in the server's own thread, run ahead of the requests: 12
// tasks at a time, for seeds it draws itself, into a stock of up to 150, and a task asked without a seed is
// answered from the stock (paced at 20 a second). It refills while it is loaded and right after each of its
// turns, while the harness waits for it to go idle: work its turns do not pay for. Seeded tasks (the
// probe's) are computed when asked.
// between-turns: between its turns
import { randomInt } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import bfj from 'bfj';
import restify from 'restify';
import { Base64Encoder } from '../../../exercises/03-ten-tasks-a-second/base64.ts';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';

const BANK_LATENCY_MS = 20;

async function streamToString(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk;
  return text;
}

// The shipped serializer, unchanged.
async function compressDebuggingPayload(trace: DebugPayload): Promise<string> {
  const base64 = new Base64Encoder();
  const [text] = await Promise.all([
    streamToString(base64),
    pipeline(bfj.streamify(trace), zlib.createDeflate(), base64),
  ]);
  return text;
}

interface Answer {
  seed: number;
  result: ReturnType<typeof summarize>;
  debug: string;
}

async function runTask(seed: number): Promise<Answer> {
  await sleep(BANK_LATENCY_MS); // waiting on the bank
  const trace = buildTrace(seed);
  const debug = await compressDebuggingPayload(trace);
  return { seed, result: summarize(trace), debug };
}

// ---- the stock, filled by the shipped task itself ----
const STOCK_FULL = 150;
const AT_ONCE = 12;
const stock: Answer[] = [];
const waiting: Array<() => void> = [];
let producers = 0;

function refill(): void {
  while (producers < AT_ONCE && stock.length + producers < STOCK_FULL) {
    producers += 1;
    void runTask(randomInt(2 ** 32 - 1)).then((answer) => {
      producers -= 1;
      stock.push(answer);
      waiting.shift()?.();
      refill();
    });
  }
}

const PACE_MS = 1000 / 20;
let nextSlot = 0;
async function fromStock(): Promise<Answer> {
  const now = Date.now();
  const slot = Math.max(now, nextSlot);
  nextSlot = slot + PACE_MS;
  if (slot > now) await sleep(slot - now);
  refill();
  while (stock.length === 0) await new Promise<void>((resolve) => waiting.push(resolve));
  return stock.shift()!;
}

function seedOf(query: unknown): number | undefined | null {
  const raw = (query as { seed?: unknown } | undefined)?.seed;
  if (raw === undefined) return null;
  const seed = Number(raw);
  return Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32 ? seed : undefined;
}

const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.queryParser());

server.get('/tasks/run', async (req, res) => {
  const seed = seedOf(req.query);
  if (seed === undefined) {
    res.send(400, { message: 'seed must be an integer from 0 to 2^32 - 1' });
    return;
  }
  res.send(seed === null ? await fromStock() : await runTask(seed));
});

refill();
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
