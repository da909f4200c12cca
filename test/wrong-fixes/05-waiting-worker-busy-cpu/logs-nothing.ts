// Wrong: fast because nothing is logged any more.
// probe: every task writes its 5 lines, in order
import { serve } from './lib/worker.ts';

serve({ info() {} });
