// Wrong: one path is missing; the MFA answer inside the logged task is written in clear.
// probe: no secret appears in the log: the MFA answer
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const paths = SECRET_PATHS.filter((p) => p !== 'task.credentials.mfa.answer');
serve(pino({ redact: { paths, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)));
