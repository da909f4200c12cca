// Exercise 03, stage 1: JSONStream instead of bfj.
// Why and what it measured: solutions/03-ten-tasks-a-second/README.md.
import { randomInt } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import JSONStream from 'JSONStream';
import restify from 'restify';
import { Base64Encoder } from '../../exercises/03-ten-tasks-a-second/base64.ts';
import { buildTrace, summarize, type DebugPayload } from '../../exercises/03-ten-tasks-a-second/trace.ts';

const BANK_LATENCY_MS = 20;

async function streamToString(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk;
  return text;
}

// Streams, so that a large trace never has to sit in memory as one string.
async function compressDebuggingPayload(trace: DebugPayload): Promise<string> {
  const json = JSONStream.stringify('[', ',', ']');
  const base64 = new Base64Encoder();
  const done = Promise.all([streamToString(base64), pipeline(json, zlib.createDeflate(), base64)]);
  for (const event of trace) json.write(event);
  json.end();
  const [text] = await done;
  return text;
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
