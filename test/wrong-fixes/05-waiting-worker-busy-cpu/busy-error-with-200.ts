// Wrong: once it has served 100 requests it sheds every other task with an error body, sent with status
// 200 so that the load generator counts it as answered. The probe, which comes first, never sees one.
// under-load: the answer names its task
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

let served = 0;
serve(pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)), {
  shortcut(res) {
    if (++served <= 100 || served % 2 !== 0) return false;
    res.send({ message: 'busy, try again later' });
    return true;
  },
});
