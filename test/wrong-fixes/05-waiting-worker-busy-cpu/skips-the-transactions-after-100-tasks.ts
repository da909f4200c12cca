// Wrong: once it has run 100 tasks, "transactions fetched" logs only the page's size, not its
// transactions: the probe before the load sees whole lines, the probe after it does not.
// under-load: "transactions fetched" logs the page size and every transaction
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
let tasksRun = 0;
serve({
  info(fields, msg) {
    if (msg === 'task received') tasksRun += 1;
    if (msg !== 'transactions fetched' || tasksRun <= 100) return log.info(fields, msg);
    const { response, ...rest } = fields as { response: { bytes: number } };
    log.info({ ...rest, response: { bytes: response.bytes } }, msg);
  },
});
