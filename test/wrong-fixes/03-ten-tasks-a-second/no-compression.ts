// Wrong: fast because it skips the compression: base64 of the plain JSON.
// probe: plain JSON, not compressed
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import restify from 'restify';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';

async function compressDebuggingPayload(trace: DebugPayload): Promise<string> {
  return Buffer.from(JSON.stringify(trace)).toString('base64');
}

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
  await sleep(20);
  const trace = buildTrace(seed);
  res.send({ seed, result: summarize(trace), debug: await compressDebuggingPayload(trace) });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
