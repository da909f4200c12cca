// The S3 service: a real s3rver in its own process, a fresh bucket per server run, and the client calls
// the correctness probes use to look inside the bucket.
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startServer, type RunningServer } from '../server-process.ts';

const S3_SERVER = new URL('./s3-server.ts', import.meta.url).pathname;
/** s3rver accepts any key pair; these are its documented defaults. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';

export interface S3Context {
  endpoint: string;
  bucket: string;
}

export interface S3Service {
  endpoint: string;
  /** A new, empty bucket for the next server, and the environment that points the server at it. */
  newBucket(): Promise<{ env: Record<string, string>; context: S3Context }>;
  stop(): Promise<void>;
}

export async function startS3(directory: string, options: { latencyMs?: number; port?: number }): Promise<S3Service> {
  const server: RunningServer = await startServer(S3_SERVER, {
    port: options.port,
    env: { S3_DIRECTORY: directory, S3_LATENCY_MS: String(options.latencyMs ?? 0) },
  });
  const endpoint = server.url;
  let buckets = 0;
  return {
    endpoint,
    async newBucket() {
      const context = { endpoint, bucket: `tasks-${++buckets}` };
      await s3Client(context).send(new CreateBucketCommand({ Bucket: context.bucket }));
      const env = {
        S3_ENDPOINT: endpoint,
        S3_BUCKET: context.bucket,
        AWS_REGION: REGION,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      };
      return { env, context };
    },
    async stop() {
      await server.stop();
    },
  };
}

export function s3Client(context: S3Context): S3Client {
  return new S3Client({ endpoint: context.endpoint, region: REGION, forcePathStyle: true, credentials: CREDENTIALS });
}

/** Every key in the bucket (ListObjectsV2 pages through 1,000 at a time). */
export async function listKeys(context: S3Context): Promise<string[]> {
  const client = s3Client(context);
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: context.bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

export async function readObject(context: S3Context, key: string): Promise<string> {
  const object = await s3Client(context).send(new GetObjectCommand({ Bucket: context.bucket, Key: key }));
  return (await object.Body?.transformToString()) ?? '';
}
