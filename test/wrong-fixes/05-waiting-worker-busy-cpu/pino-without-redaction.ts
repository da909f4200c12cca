// Wrong: pino, but the secrets go to the log as they are.
// probe: no secret appears in the log: the password
import pino from 'pino';
import { LOG_DESTINATION, serve } from './lib/worker.ts';

serve(pino(pino.destination(LOG_DESTINATION)));
