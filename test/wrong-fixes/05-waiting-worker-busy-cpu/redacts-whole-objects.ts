// Wrong: whole objects are redacted, so the username, the MFA question and the account ids are lost too.
// probe: "bank login" logs the username
import pino from 'pino';
import { LOG_DESTINATION, serve } from './lib/worker.ts';

const paths = ['request.headers.authorization', 'task', 'credentials', 'session', 'accounts', 'accessToken'];
serve(pino({ redact: { paths, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)));
