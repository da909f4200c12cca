// Wrong: stage 2, and it no longer waits on the bank: "the 20 ms are idle time, not work", so the task
// builds its trace without ever talking to the bank it stands for. Every answer is byte for byte right.
// Judged in the author check's run, in turns: beside the other known-wrong fixes' loads its answers
// queued past the bank's 20 ms (in a CI run, none of 52 sampled came sooner than 18 ms).
// in-turns: waits 20 ms on the bank
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import restify from 'restify';
import { buildTrace, summarize, type DebugPayload } from '../../../exercises/03-ten-tasks-a-second/trace.ts';


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

const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.queryParser());

server.get('/tasks/run', async (req, res) => {
  const seed = seedOf(req.query);
  if (seed === undefined) {
    res.send(400, { message: 'seed must be an integer from 0 to 2^32 - 1' });
    return;
  }
  const trace = buildTrace(seed);
  const debug = await compressDebuggingPayload(trace);
  res.send({ seed, result: summarize(trace), debug });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`bank worker listening on ${server.url}`);
});
