// Wrong: once it has run 100 tasks it logs only one task in ten, so that the logger never slows a busy
// worker: the probe before the load finds every line; most tasks of the load leave no trace.
// after-load: every task under load wrote its 5 lines
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
let tasks = 0;
serve({
  info(fields, msg) {
    if (msg === 'task received') tasks += 1;
    if (tasks <= 100 || tasks % 10 === 0) log.info(fields, msg);
  },
});
