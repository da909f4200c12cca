// The S3 service: a real s3rver in its own process, a fresh bucket per server run, and the client calls
// the correctness probes use to look inside the bucket.
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, ListObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { startServer, type RunningServer } from '../server-process.ts';
import { defineService, type Service, type StartedService } from '../service.ts';

/**
 * The workshop pins its AWS SDK: the SDK's notice that later versions will need a newer Node is not the
 * trainee's to act on (on Node 20 it printed ten lines before every report of exercise 02, from the harness
 * and from each server). Given to the servers that use S3, and set in the harness only while it makes a client.
 */
const NO_NODE_VERSION_NOTICE = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

const S3_SERVER = new URL('./s3-server.ts', import.meta.url).pathname;
/** s3rver accepts any key pair; these are its documented defaults. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';

export interface S3Context {
  endpoint: string;
  bucket: string;
  /** What the harness's probes send to switch the delay off (answerAtOnce); the servers never get it. */
  control: string;
}

export interface S3Options {
  /** Delays every S3 request, as a remote region's round trip would. */
  latencyMs?: number;
  /** Counts as stored only the keys under this prefix (the uploads the exercise asks for); each key once. */
  countPrefix?: string;
  port?: number;
}

/** A real S3 API (s3rver); the server gets S3_ENDPOINT, S3_BUCKET and the AWS_* credentials. */
export function s3Service(options: S3Options = {}): Service<S3Context> {
  return defineService({ name: 'S3 service (s3rver)', start: (directory) => startS3(directory, options) });
}

async function startS3(directory: string, options: S3Options): Promise<StartedService<S3Context>> {
  const control = randomUUID();
  const server: RunningServer = await startServer(S3_SERVER, {
    port: options.port,
    env: { S3_DIRECTORY: directory, S3_LATENCY_MS: String(options.latencyMs ?? 0), S3_CONTROL_TOKEN: control, S3_COUNT_PREFIX: options.countPrefix ?? '' },
  });
  const endpoint = server.url;
  let buckets = 0;
  return {
    // A new, empty bucket for the next server, and the environment that points the server at it.
    async prepare() {
      const context = { endpoint, bucket: `tasks-${++buckets}`, control };
      await s3Client(context).send(new CreateBucketCommand({ Bucket: context.bucket }));
      const env = {
        S3_ENDPOINT: endpoint,
        S3_BUCKET: context.bucket,
        AWS_REGION: REGION,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        [NO_NODE_VERSION_NOTICE]: 'true',
      };
      return { env, context };
    },
    describe: () => `S3 (s3rver) at ${endpoint}, data in ${directory}`,
    async stop() {
      await server.stop();
    },
  };
}

export function s3Client(context: S3Context): S3Client {
  // Set only for the moment: the processes the harness starts later keep the environment they were given.
  const before = process.env[NO_NODE_VERSION_NOTICE];
  process.env[NO_NODE_VERSION_NOTICE] = 'true';
  try {
    return new S3Client({ endpoint: context.endpoint, region: REGION, forcePathStyle: true, credentials: CREDENTIALS });
  } finally {
    if (before === undefined) delete process.env[NO_NODE_VERSION_NOTICE];
    else process.env[NO_NODE_VERSION_NOTICE] = before;
  }
}

/**
 * Every key in the bucket, 1,000 a page. s3rver may answer a listing with a 500 when an object is
 * half-written at that moment, so a failed listing is retried.
 */
export async function listKeys(context: S3Context, attempts = 8): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await listOnce(context);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

// ListObjects (v1) pages with a Marker, the last key seen. s3rver's v2 continuation tokens use DES, which
// OpenSSL 3 (Node 17 and later) no longer has: any v2 listing past 1,000 keys fails with a 500.
async function listOnce(context: S3Context): Promise<string[]> {
  const client = s3Client(context);
  const keys: string[] = [];
  let marker: string | undefined;
  for (;;) {
    const page = await client.send(new ListObjectsCommand({ Bucket: context.bucket, Marker: marker }));
    const contents = page.Contents ?? [];
    for (const object of contents) if (object.Key) keys.push(object.Key);
    if (!page.IsTruncated || contents.length === 0) return keys;
    marker = keys.at(-1);
  }
}

/** Drops the service's delay for this bucket, for good: its server's load is over (s3-server.ts). */
export async function answerAtOnce(context: S3Context): Promise<void> {
  const response = await fetch(`${context.endpoint}/_hotpath/at-once?bucket=${encodeURIComponent(context.bucket)}`, {
    method: 'POST',
    headers: { 'x-hotpath-control': context.control },
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`the S3 service refused to drop its delay: ${response.status}`);
}

/** How many objects the S3 server has stored in the bucket so far (PUTs answered 2xx). */
export async function storedCount(context: S3Context): Promise<number> {
  return bucketCount(context, 'stored');
}

/** How many PUTs answered 2xx wrote over an object already stored in the bucket (under the counted prefix). */
export async function rewrittenCount(context: S3Context): Promise<number> {
  return bucketCount(context, 'rewritten');
}

async function bucketCount(context: S3Context, what: 'stored' | 'rewritten'): Promise<number> {
  const response = await fetch(`${context.endpoint}/_hotpath/${what}`, { signal: AbortSignal.timeout(5000) });
  const counts = (await response.json()) as Record<string, number>;
  return counts[context.bucket] ?? 0;
}

/**
 * Waits until the bucket holds `expected` objects, or until no new object has arrived for `quietMs`, or
 * until `limitMs` has passed; returns the count then. Uploads still running when it returns are late.
 */
export async function waitForUploads(
  context: S3Context,
  expected: number,
  options: { quietMs?: number; limitMs?: number; onProgress?: (count: number) => void } = {},
): Promise<{ count: number; settled: boolean; waitedMs: number }> {
  const { quietMs = 3000, limitMs = 60_000 } = options;
  const started = Date.now();
  let count = await storedCount(context);
  let lastChange = Date.now();
  while (count < expected && Date.now() - lastChange < quietMs && Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await storedCount(context);
    if (now !== count) {
      count = now;
      lastChange = Date.now();
      options.onProgress?.(count);
    }
  }
  return { count, settled: count >= expected || Date.now() - lastChange >= quietMs, waitedMs: Date.now() - started };
}

export async function readObject(context: S3Context, key: string): Promise<string> {
  const object = await s3Client(context).send(new GetObjectCommand({ Bucket: context.bucket, Key: key }));
  return (await object.Body?.transformToString()) ?? '';
}
