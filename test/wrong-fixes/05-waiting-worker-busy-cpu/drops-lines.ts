// Wrong: fast because only the first and the last line of each task are written.
// probe: every task writes its 5 lines, in order
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
serve({
  info(fields, msg) {
    if (msg === 'task received' || msg === 'task done') log.info(fields, msg);
  },
});
