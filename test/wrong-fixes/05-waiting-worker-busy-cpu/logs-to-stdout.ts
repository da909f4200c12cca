// Wrong: the lines go to stdout, not to the file the workshop (and the log pipeline) reads.
// probe: every task writes its 5 lines, in order
import pino from 'pino';
import { SECRET_PATHS, serve } from './lib/worker.ts';

serve(pino({ redact: { paths: SECRET_PATHS, censor: '[Redacted]' } }));
