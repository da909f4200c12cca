// node-flags: --max-old-space-size=1536
// Wrong: for each task of the load, a tiny placeholder goes to the task's own key at once, on a client
// with 512 sockets, so the bucket counts the payload as stored; the real payload waits, compressed, in a
// queue of Buffers (off the V8 heap, no timers) that the shipped 50-socket client drains, and is written
// over the placeholder seconds later. Once the worker is idle the queue is drained fast. The pile of the
// shipped server is still there; the bucket's count, the heap figure and the timers do not see it.
// after-load: each payload is written once, whole
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import restify from 'restify';
import { debugKey, recordTrace } from '../../../exercises/02-worker-heap-climbs/trace.ts';

const deflate = promisify(zlib.deflate);
const BANK_LATENCY_MS = 20;
const bucket = process.env.S3_BUCKET ?? 'debug';
// The shipped client: 50 sockets.
const slow = new S3Client({ endpoint: process.env.S3_ENDPOINT, forcePathStyle: true });
const fast = new S3Client({
  endpoint: process.env.S3_ENDPOINT,
  forcePathStyle: true,
  requestHandler: { httpAgent: { keepAlive: true, maxSockets: 512 }, httpsAgent: { keepAlive: true, maxSockets: 512 } },
});

interface Owed { key: string; body: Buffer; placed: Promise<unknown> }
const queue: Owed[] = [];
let running = 0;
let lastRequest = Date.now();

function pump(): void {
  const idle = Date.now() - lastRequest > 400;
  const limit = idle ? 400 : 50;
  while (running < limit && queue.length > 0) {
    const item = queue.shift()!;
    running += 1;
    const client = idle ? fast : slow;
    item.placed
      .catch(() => undefined)
      .then(() => client.send(new PutObjectCommand({ Bucket: bucket, Key: item.key, Body: item.body.toString('latin1'), ContentType: 'text/plain' })))
      .catch((error: unknown) => console.error(`upload ${item.key} failed`, error))
      .finally(() => {
        running -= 1;
        pump();
      });
  }
}
setInterval(pump, 100).unref();

const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.bodyParser());

server.post('/tasks', async (req: restify.Request, res: restify.Response) => {
  lastRequest = Date.now();
  const input = (req.body ?? {}) as { taskId?: string; institution?: string };
  const namedByCaller = input.taskId !== undefined;
  const taskId = input.taskId ?? randomUUID();
  const institution = input.institution ?? 'ins_1';
  await sleep(BANK_LATENCY_MS);
  const trace = recordTrace(taskId, institution);
  res.send({ taskId, institution, calls: trace.entries.length, status: 'done' });
  const key = debugKey(taskId);
  const placed = namedByCaller
    ? Promise.resolve()
    : fast.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'pending', ContentType: 'text/plain' }));
  placed.catch(() => undefined);
  const b64 = (await deflate(JSON.stringify(trace))).toString('base64');
  queue.push({ key, body: Buffer.from(b64, 'latin1'), placed });
  pump();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
