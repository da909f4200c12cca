import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/paths.ts';
import { liveServerCount } from '../scripts/server-process.ts';
import { startServices } from '../scripts/services/index.ts';
import { logFileService } from '../scripts/services/log-file.ts';
import { answerAtOnce, listKeys, readObject, s3Client, s3Service, storedCount } from '../scripts/services/s3.ts';

/** Long enough that a request without it cannot take as long on a busy machine. */
const LATENCY_MS = 150;

describe('services', () => {
  it('starts a real S3 server, gives each server a fresh bucket and log file, and removes its data on stop', async () => {
    const before = liveServerCount();
    const [s3Wanted, logWanted] = [s3Service({ latencyMs: LATENCY_MS }), logFileService()];
    const services = await startServices([s3Wanted, logWanted]);
    const first = await services.prepare();
    const second = await services.prepare();
    expect(first.contexts.get(s3Wanted)!.bucket).not.toBe(second.contexts.get(s3Wanted)!.bucket);
    expect(first.env.S3_ENDPOINT).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.env.LOG_FILE).not.toBe(second.env.LOG_FILE);
    expect(existsSync(first.contexts.get(logWanted)!)).toBe(true);

    const s3 = first.contexts.get(s3Wanted)!;
    const started = Date.now();
    await s3Client(s3).send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'a/1.txt', Body: 'hello' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(LATENCY_MS); // the set latency is applied
    expect(await listKeys(s3)).toEqual(['a/1.txt']);
    expect(await listKeys(second.contexts.get(s3Wanted)!)).toEqual([]);
    expect(await readObject(s3, 'a/1.txt')).toBe('hello');

    // Once a server's load is over, its bucket drops the delay; the other buckets keep it.
    const timed = async (bucket: typeof s3, key: string) => {
      const from = Date.now();
      await s3Client(bucket).send(new PutObjectCommand({ Bucket: bucket.bucket, Key: key, Body: 'x' }));
      return Date.now() - from;
    };
    // Only with the harness's token: a server under test gets the endpoint and its bucket, never the token.
    const asked = await fetch(`${s3.endpoint}/_hotpath/at-once?bucket=${second.contexts.get(s3Wanted)!.bucket}`, { method: 'POST' });
    expect(asked.status).toBe(403);
    expect(Object.values(first.env)).not.toContain(s3.control);
    await answerAtOnce(s3);
    expect(await timed(second.contexts.get(s3Wanted)!, 'b/1.txt')).toBeGreaterThanOrEqual(LATENCY_MS);
    // The fastest of three: one PUT can stall on a busy machine; a bucket that still delays delays them all.
    const undelayed = [await timed(s3, 'a/2.txt'), await timed(s3, 'a/3.txt'), await timed(s3, 'a/4.txt')];
    expect(Math.min(...undelayed)).toBeLessThan(LATENCY_MS);

    const folder = path.dirname(first.contexts.get(logWanted)!);
    await services.stop();
    expect(existsSync(folder)).toBe(false);
    expect(liveServerCount()).toBe(before);
  });

  it("counts as stored each key once, and only under the service's prefix: a key written again or elsewhere is no upload", async () => {
    const wanted = s3Service({ countPrefix: 'debug/' });
    const services = await startServices([wanted]);
    try {
      const s3 = (await services.prepare()).contexts.get(wanted)!;
      const put = (key: string) => s3Client(s3).send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'x' }));
      for (const key of ['debug/1.json', 'debug/1.json', 'pad/marker', 'pad/marker', 'debug/2.json']) await put(key);
      expect(await storedCount(s3)).toBe(2);
    } finally {
      await services.stop();
    }
  });

  it('says clearly when the S3 port is taken, and leaves nothing behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const error = await startServices([s3Service({ port })]).catch((e: unknown) => e);
      expect(String(error)).toMatch(new RegExp(`S3 service \\(s3rver\\) did not start: port ${port} .* in use`));
      expect(liveServerCount()).toBe(0);
    } finally {
      blocker.close();
    }
  });

  it("keeps the SDK's notice about later versions' Node support out of the harness's output and the servers'", async () => {
    // As in a shell where nobody set it.
    const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _set, ...shell } = process.env;
    const makeClient = "new (require('@aws-sdk/client-s3').S3Client)({ region: 'us-east-1' })";
    // The harness's own client, and the environment it leaves for the processes it starts next.
    const harness = `const { s3Client } = await import('./scripts/services/s3.ts');
      s3Client({ endpoint: 'http://127.0.0.1:9', bucket: 'b', control: 'c' });
      process.stdout.write(String(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED));`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', harness], { cwd: ROOT, encoding: 'utf8', env: shell });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('NodeVersionSupportWarning');
    expect(run.stdout).toBe('undefined');
    // A server given the S3 service's environment.
    const services = await startServices([s3Service()]);
    try {
      const { env } = await services.prepare();
      const server = spawnSync(process.execPath, ['-e', makeClient], { cwd: ROOT, encoding: 'utf8', env: { ...shell, ...env } });
      expect(server.status, server.stderr).toBe(0);
      expect(server.stderr).not.toContain('NodeVersionSupportWarning');
    } finally {
      await services.stop();
    }
  });
});
