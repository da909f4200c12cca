// The log-file service: an empty file per server run, named in LOG_FILE, that the probe can read. Its
// context is the file's path.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { defineService, type Service } from '../service.ts';

export function logFileService(): Service<string> {
  return defineService({
    name: 'log file',
    async start(directory) {
      let count = 0;
      let last: string | undefined;
      return {
        async prepare() {
          const logFile = path.join(directory, `server-${++count}.log`);
          writeFileSync(logFile, '');
          last = logFile;
          return { env: { LOG_FILE: logFile }, context: logFile };
        },
        describe: () => (last ? `log file: ${last}` : `log files in ${directory}`),
        async stop() {},
      };
    },
  });
}
