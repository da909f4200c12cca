// What is judged once the load is over, while the server still runs: the correctness probe again (a fix can
// answer well when idle and wrongly once loaded) and the exercise's own after-load check (every upload
// arrived, the queue was flushed). Shared by servers measured one after another and in turns.
import type { BenchOptions } from './bench-options.ts';
import { probeAnswers, runCheck, type CheckResult } from './check.ts';
import type { Exercise } from './exercises.ts';
import type { AfterLoadContext } from './manifest.ts';
import type { Started } from './start-and-probe.ts';
import { ALONE, type TurnTaker } from './turns.ts';

/** How long a server may take to stop after SIGTERM when an after-load check asks for a graceful stop. */
const GRACEFUL_STOP_MS = 10_000;

/** The correctness probe again, on the server the load left behind. */
export function probeAgain(exercise: Exercise, { run, server, contexts }: Started, turns: TurnTaker = ALONE): Promise<CheckResult> {
  const p50 = run.load?.latency.p50;
  return turns.take(() => runCheck((url) => exercise.manifest.check(url, { services: contexts, loadOver: true, ...(p50 !== undefined ? { loadP50Ms: p50 } : {}) }), server.url));
}

/**
 * The exercise's after-load check (the caller makes sure it has one), told what the load did: the answers
 * it received and the most requests its phases may have left in flight (one per connection per phase).
 */
export function afterLoadCheck(
  exercise: Exercise,
  { run, server, contexts, probedFrom, timeline }: Started,
  load: { answered: number; inFlightAtMost: number },
  options: BenchOptions,
  turns: TurnTaker = ALONE,
): Promise<CheckResult> {
  const { manifest } = exercise;
  options.onEvent?.({ type: 'after-load', label: run.label });
  const context: AfterLoadContext = {
    services: contexts,
    loadOver: true,
    baseUrl: server.url,
    answered: load.answered,
    answeredBy: timeline.answeredBy(),
    answeredIds: timeline.answeredIds(),
    probeAnswers: probeAnswers(server.url) - probedFrom,
    inFlightAtMost: load.inFlightAtMost,
    connections: manifest.load.connections,
    stopServer: async () => {
      const { code, signal } = await server.stop(GRACEFUL_STOP_MS);
      return { code, signal };
    },
  };
  return turns.take(() => runCheck(() => manifest.afterLoad!(context), server.url));
}
