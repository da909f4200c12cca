// The services an exercise declares in its manifest (a real S3 server, a log file the probe can read),
// started before its servers and stopped after them, each with its data in a temporary folder that goes
// with it. Every server run gets fresh state: its own bucket, its own log file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServiceRequest } from '../manifest.ts';
import { ServerStartError } from '../server-process.ts';
import { startS3, type S3Context, type S3Service } from './s3.ts';

/** What a correctness probe may use of the services, for the server it is checking. */
export interface ServiceContexts {
  s3?: S3Context;
  /** The file the server was told to write its log lines to (LOG_FILE). */
  logFile?: string;
}

export interface Services {
  /** Fresh state for the next server: the environment it gets and what its probe may look at. */
  prepare(): Promise<{ env: Record<string, string>; contexts: ServiceContexts }>;
  /** One line per service, for `run` to print. */
  describe(): string[];
  stop(): Promise<void>;
}

const liveFolders = new Set<string>();

/** Removes every service's data at once; for an 'exit' handler, when there is no time to stop in order. */
export function removeServiceDataNow(): void {
  for (const folder of liveFolders) rmSync(folder, { recursive: true, force: true });
  liveFolders.clear();
}

export async function startServices(requests: ServiceRequest[] = []): Promise<Services> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'hotpath-services-'));
  liveFolders.add(folder);
  let s3: S3Service | undefined;
  let logFiles = 0;
  let lastLogFile: string | undefined;
  const stop = async () => {
    await s3?.stop();
    rmSync(folder, { recursive: true, force: true });
    liveFolders.delete(folder);
  };
  try {
    for (const request of requests) {
      if (request.kind === 's3') {
        const data = path.join(folder, 's3');
        s3 = await startS3(data, request).catch((error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          throw new ServerStartError(`the S3 service (s3rver) did not start: ${why}`, error instanceof ServerStartError ? error.output : '');
        });
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const wantsLogFile = requests.some((r) => r.kind === 'log-file');
  return {
    async prepare() {
      const env: Record<string, string> = {};
      const contexts: ServiceContexts = {};
      if (s3) {
        const bucket = await s3.newBucket();
        Object.assign(env, bucket.env);
        contexts.s3 = bucket.context;
      }
      if (wantsLogFile) {
        const logFile = path.join(folder, `server-${++logFiles}.log`);
        writeFileSync(logFile, '');
        env.LOG_FILE = logFile;
        lastLogFile = logFile;
        contexts.logFile = logFile;
      }
      return { env, contexts };
    },
    describe() {
      const lines: string[] = [];
      if (s3) lines.push(`S3 (s3rver) at ${s3.endpoint}, data in ${folder}`);
      if (wantsLogFile) lines.push(lastLogFile ? `log file: ${lastLogFile}` : `log files in ${folder}`);
      return lines;
    },
    stop,
  };
}
