// Wrong: the secrets are left out of the lines instead of shown as "[Redacted]", so the lines no longer
// say the same (a reader cannot tell a missing password from a redacted one).
// probe: "bank login" shows credentials.password as "[Redacted]"
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

serve(pino({ redact: { paths: SECRET_PATHS, remove: true } }, pino.destination(LOG_DESTINATION)));
