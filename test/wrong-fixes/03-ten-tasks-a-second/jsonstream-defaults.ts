// Wrong: JSONStream with its default separators writes '[\n', '\n,\n' and '\n]\n' around the events:
// the same data, but not the compact JSON the replay tool expects.
// probe: the same data, written differently
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import restify from 'restify';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';
import JSONStream from 'JSONStream';
import { pipeline } from 'node:stream/promises';
import { Base64Encoder } from '../../../exercises/03-ten-tasks-a-second/base64.ts';

async function compressDebuggingPayload(trace: DebugPayload): Promise<string> {
  const json = JSONStream.stringify();
  const base64 = new Base64Encoder();
  let text = '';
  base64.on('data', (chunk: string) => (text += chunk));
  const done = pipeline(json, zlib.createDeflate(), base64);
  for (const event of trace) json.write(event);
  json.end();
  await done;
  return text;
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
