// Wrong: sampling. Only one task in ten is logged, so the others leave no trace.
// probe: every task writes its 5 lines, in order
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
const sampled = new Set<unknown>();
let tasks = 0;
serve({
  info(fields, msg) {
    if (msg === 'task received' && tasks++ % 10 === 0) sampled.add(fields.taskId);
    if (sampled.has(fields.taskId)) log.info(fields, msg);
  },
});
