// The log-file service: an empty file per server run, named in LOG_FILE, that the probe can read.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { StartedService } from './index.ts';

export async function startLogFiles(directory: string): Promise<StartedService> {
  mkdirSync(directory, { recursive: true });
  let count = 0;
  let last: string | undefined;
  return {
    async prepare() {
      const logFile = path.join(directory, `server-${++count}.log`);
      writeFileSync(logFile, '');
      last = logFile;
      return { env: { LOG_FILE: logFile }, contexts: { logFile } };
    },
    describe: () => (last ? `log file: ${last}` : `log files in ${directory}`),
    async stop() {},
  };
}
