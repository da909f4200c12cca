// Wrong: stage 2, and while three connections or more are open (as under load; the probe asks on one at
// a time) each task it runs is answered a second time, to a new task asked for 5 to 22 ms later (and not
// the very next answer): half the load's tasks never run (no bank, no trace, no deflate) and get another
// task's seed and payload. A copy sent that soon after its original is seldom in the same sample of the
// load's answers (a pair every 50 ms); every answer's seed is keyed, and a copy answers before the bank's 20 ms.
// under-load: repeat an earlier answer's task seed | waits 20 ms on the bank
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import restify from 'restify';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';

const BANK_LATENCY_MS = 20;

const deflate = promisify(zlib.deflate);

async function compressDebuggingPayload(trace: DebugPayload): Promise<string> {
  const compressed = await deflate(JSON.stringify(trace));
  return compressed.toString('base64');
}

/** The seed stands in for the bank's answers: a task without one is a new task. */
function seedOf(query: unknown): number | undefined {
  const raw = (query as { seed?: unknown } | undefined)?.seed;
  if (raw === undefined) return randomInt(2 ** 32 - 1);
  const seed = Number(raw);
  return Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32 ? seed : undefined;
}

interface Kept {
  at: number;
  seq: number;
  answer: { seed: number; result: unknown; debug: string };
}
const kept: Kept[] = [];
let open = 0;
let sent = 0;

const server = restify.createServer({ name: 'bank-worker' });
server.server.on('connection', (socket) => {
  open += 1;
  socket.on('close', () => (open -= 1));
});
server.use(restify.plugins.queryParser());

server.get('/tasks/run', async (req, res) => {
  const seed = seedOf(req.query);
  if (seed === undefined) {
    res.send(400, { message: 'seed must be an integer from 0 to 2^32 - 1' });
    return;
  }
  const unseeded = (req.query as { seed?: unknown } | undefined)?.seed === undefined;
  // A copy too young to send waits until it is 5 ms old (a task would wait 20 ms on the bank anyway).
  const young = kept[0];
  if (unseeded && open >= 3 && young && Date.now() - young.at < 5) await sleep(5 - (Date.now() - young.at));
  const now = Date.now();
  while (kept.length > 0 && now - kept[0]!.at > 22) kept.shift();
  if (unseeded && open >= 3 && kept.length > 0 && now - kept[0]!.at >= 5 && sent > kept[0]!.seq + 1) {
    sent += 1;
    res.send(kept.shift()!.answer);
    return;
  }
  await sleep(BANK_LATENCY_MS); // waiting on the bank
  const trace = buildTrace(seed);
  const debug = await compressDebuggingPayload(trace);
  const answer = { seed, result: summarize(trace), debug };
  sent += 1;
  if (unseeded && open >= 3) kept.push({ at: Date.now(), seq: sent, answer });
  res.send(answer);
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`bank worker listening on ${server.url}`);
});
