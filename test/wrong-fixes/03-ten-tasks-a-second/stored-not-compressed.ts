// Wrong: deflates at level 0, which stores the trace uncompressed in valid zlib framing: no compression work, a payload five times the size.
// probe: stored, not compressed
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import restify from 'restify';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';

const BANK_LATENCY_MS = 20;

const deflate = (text: string) => promisify(zlib.deflate)(text, { level: 0 });

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

const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.queryParser());

server.get('/tasks/run', async (req, res) => {
  const seed = seedOf(req.query);
  if (seed === undefined) {
    res.send(400, { message: 'seed must be an integer from 0 to 2^32 - 1' });
    return;
  }
  await sleep(BANK_LATENCY_MS); // waiting on the bank
  const trace = buildTrace(seed);
  const debug = await compressDebuggingPayload(trace);
  res.send({ seed, result: summarize(trace), debug });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`bank worker listening on ${server.url}`);
});
