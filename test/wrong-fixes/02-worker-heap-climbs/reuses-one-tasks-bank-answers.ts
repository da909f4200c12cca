// node-flags: --max-old-space-size=1536
// Wrong: stage 3, except that a task it names itself (the load's; the probe names its own)
// keeps the bank answers of the first such task it recorded: every payload of the load holds 60 whole,
// incompressible 800-character bodies, the same 60 in every payload, none of them this task's (the
// urls, headers and x-request-ids are still this task's, so nothing else gives it away).
// after-load: each payload holds its own task's bank answers
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import restify from 'restify';
import { debugKey, recordTrace, type NetworkTrace } from '../../../exercises/02-worker-heap-climbs/trace.ts';

const BANK_LATENCY_MS = 20;
const bucket = process.env.S3_BUCKET ?? 'debug';
// Region and credentials come from the AWS_* environment, as in production. The SDK builds its
// NodeHttpHandler from these options; maxSockets is per host, and every upload goes to one host.
const s3 = new S3Client({
  endpoint: process.env.S3_ENDPOINT,
  forcePathStyle: true,
  requestHandler: { httpAgent: { keepAlive: true, maxSockets: 512 }, httpsAgent: { keepAlive: true, maxSockets: 512 } },
});

// JSON, deflated, as base64: the format the replay tool reads.
async function compress(trace: NetworkTrace): Promise<string> {
  const deflated = Readable.from([JSON.stringify(trace)]).pipe(zlib.createDeflate());
  const chunks: Buffer[] = [];
  for await (const chunk of deflated) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('base64');
}

// At most this many uploads at once: enough to keep S3 busy, few enough that their payloads stay small.
const UPLOAD_SLOTS = 256;
let uploadsRunning = 0;
const waitingForSlot: Array<() => void> = [];

/** Resolves once the upload has a slot (it then runs on its own); rejects nothing: failures are logged. */
async function startUpload(trace: NetworkTrace): Promise<void> {
  while (uploadsRunning >= UPLOAD_SLOTS) await new Promise<void>((resolve) => waitingForSlot.push(resolve));
  uploadsRunning += 1;
  postTaskDebugging(trace)
    .catch((error: unknown) => console.error(`debug upload for ${trace.taskId} failed:`, error))
    .finally(() => {
      uploadsRunning -= 1;
      waitingForSlot.shift()?.();
    });
}

async function postTaskDebugging(trace: NetworkTrace): Promise<void> {
  const body = await compress(trace);
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: debugKey(trace.taskId), Body: body, ContentType: 'text/plain' }));
}

let firstBodies: string[] | undefined;
const server = restify.createServer({ name: 'bank-worker' });
server.use(restify.plugins.bodyParser());

server.post('/tasks', async (req: restify.Request, res: restify.Response) => {
  const input = (req.body ?? {}) as { taskId?: string; institution?: string };
  const taskId = input.taskId ?? randomUUID();
  const institution = input.institution ?? 'ins_1';
  await sleep(BANK_LATENCY_MS);
  const trace = recordTrace(taskId, institution);
  if (input.taskId === undefined) {
    firstBodies ??= trace.entries.map((e) => e.responseBody);
    trace.entries.forEach((e, i) => (e.responseBody = firstBodies![i]!));
  }
  // The task is done once its upload has a slot; the upload itself runs on.
  await startUpload(trace);
  res.send({ taskId, institution, calls: trace.entries.length, status: 'done' });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
