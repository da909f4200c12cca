// Wrong: while more than 20 tasks are in flight, each of its five lines logs only the task's id; when it
// is quiet, every line is whole. The probe, before the load and after it, meets a quiet worker and reads
// whole lines; the load's tasks write five lines each, as many as the count after the load asks for.
// after-load: the load's log lines say what the probe's do
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const LOADED_AT = 20;

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
let inFlight = 0;
serve({
  info(fields, msg) {
    if (msg === 'task received') inFlight += 1;
    if (inFlight <= LOADED_AT) log.info(fields, msg);
    else log.info({ taskId: (fields as { taskId: string }).taskId }, msg);
    if (msg === 'task done') inFlight -= 1;
  },
});
