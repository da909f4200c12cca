// Wrong: writes the answer itself with res.end and no Content-Type: a client that trusts the header no
// longer parses it as JSON.
// probe: the answer is JSON with Content-Type application/json
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

serve(pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)), {
  answer(res, summary) {
    res.writeHead(200);
    res.end(JSON.stringify(summary));
  },
});
