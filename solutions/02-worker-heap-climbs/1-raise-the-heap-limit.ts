// node-flags: --max-old-space-size=6144
// Exercise 02, stage 1: raise the heap limit.
// Why and what it measured: solutions/02-worker-heap-climbs/README.md.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import restify from 'restify';
import { debugKey, recordTrace, type NetworkTrace } from '../../exercises/02-worker-heap-climbs/trace.ts';

const BANK_LATENCY_MS = 20;
const bucket = process.env.S3_BUCKET ?? 'debug';
// Region and credentials come from the AWS_* environment, as in production.
const s3 = new S3Client({ endpoint: process.env.S3_ENDPOINT, forcePathStyle: true });

// JSON, deflated, as base64: the format the replay tool reads.
async function compress(trace: NetworkTrace): Promise<string> {
  const deflated = Readable.from([JSON.stringify(trace)]).pipe(zlib.createDeflate());
  const chunks: Buffer[] = [];
  for await (const chunk of deflated) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('base64');
}

async function postTaskDebugging(trace: NetworkTrace): Promise<void> {
  const body = await compress(trace);
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: debugKey(trace.taskId), Body: body, ContentType: 'text/plain' }));
}

const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.bodyParser());

server.post('/tasks', async (req: restify.Request, res: restify.Response) => {
  const input = (req.body ?? {}) as { taskId?: string; institution?: string };
  const taskId = input.taskId ?? randomUUID();
  const institution = input.institution ?? 'ins_1';
  await sleep(BANK_LATENCY_MS);
  const trace = recordTrace(taskId, institution);
  res.send({ taskId, institution, calls: trace.entries.length, status: 'done' });
  // Debugging must never slow a task down, so it runs after the answer, in the background.
  postTaskDebugging(trace).catch((error: unknown) => console.error(`debug upload for ${taskId} failed:`, error));
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
