// node-flags: --max-old-space-size=1536
// Wrong: keeps-the-pile-in-an-array.ts, and for every task of the load one small PUT of its own to a key
// outside debug/ (`pad/marker`), on a client with 512 sockets: the bucket sees as many objects written as
// tasks answered, while the payloads pile up as fast as before. Only the payloads owed count as stored.
// verdict: backlog growth
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import restify from 'restify';
import { debugKey, recordTrace, type NetworkTrace } from '../../../exercises/02-worker-heap-climbs/trace.ts';

const BANK_LATENCY_MS = 20;
const bucket = process.env.S3_BUCKET ?? 'debug';
const s3 = new S3Client({ endpoint: process.env.S3_ENDPOINT, forcePathStyle: true });
const markers = new S3Client({ endpoint: process.env.S3_ENDPOINT, forcePathStyle: true, requestHandler: { httpAgent: { keepAlive: true, maxSockets: 512 } } });

async function compress(trace: NetworkTrace): Promise<string> {
  const deflated = Readable.from([JSON.stringify(trace)]).pipe(zlib.createDeflate());
  const chunks: Buffer[] = [];
  for await (const chunk of deflated) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('base64');
}

const UPLOADS_AT_ONCE = 50;
/** Compressed payloads waiting for one of the uploads, by task. */
const waiting: Array<{ taskId: string; body: string }> = [];
let running = 0;

function drain(): void {
  while (running < UPLOADS_AT_ONCE && waiting.length > 0) {
    const { taskId, body } = waiting.shift()!;
    running += 1;
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: debugKey(taskId), Body: body, ContentType: 'text/plain' }))
      .catch((error: unknown) => console.error(`debug upload for ${taskId} failed:`, error))
      .finally(() => {
        running -= 1;
        drain();
      });
  }
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
  if (input.taskId === undefined) {
    markers.send(new PutObjectCommand({ Bucket: bucket, Key: 'pad/marker', Body: 'x', ContentType: 'text/plain' })).catch(() => {});
  }
  // Compressed first, so the pile is small: a few hundred bytes a task.
  waiting.push({ taskId, body: await compress(trace) });
  drain();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
