// Wrong: the big part of the log, the transactions page, is no longer written; only its size is.
// probe: "transactions fetched" logs the page size and every transaction
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const log = pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION));
serve({
  info(fields, msg) {
    if (msg !== 'transactions fetched') return log.info(fields, msg);
    const { response, ...rest } = fields as { response: { bytes: number } };
    log.info({ ...rest, response: { bytes: response.bytes } }, msg);
  },
});
