// Wrong: the account numbers in the bank's answer are missed (an array needs its [*]).
// probe: no secret appears in the log: account 0's number
import pino from 'pino';
import { LOG_DESTINATION, SECRET_PATHS, serve } from './lib/worker.ts';

const paths = SECRET_PATHS.map((p) => (p === 'accounts[*].number' ? 'accounts.number' : p));
serve(pino({ redact: { paths, censor: '[Redacted]' } }, pino.destination(LOG_DESTINATION)));
