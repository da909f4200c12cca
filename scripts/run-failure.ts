// How a server's failure is written into its result: a crash with when it happened, or an error, each
// with what the server printed, so the report can show why it was not measured.
import type { ServerRun } from './result.ts';
import { ServerStartError, type RunningServer } from './server-process.ts';

/** Notes an unexpected exit of the server (a crash, not a stop the harness asked for), with its output. */
export function noteCrash(run: ServerRun, server: RunningServer, when: string): void {
  const exit = server.exit();
  if (!exit || exit.expected) return;
  run.failure = `the server crashed ${when} (${exit.signal ?? `exit code ${exit.code}`})`;
  run.output = server.output();
}

export function withFailure(run: ServerRun, error: unknown, output?: string): ServerRun {
  const message = error instanceof Error ? error.message : String(error);
  const startOutput = error instanceof ServerStartError ? error.output : undefined;
  return { ...run, failure: message, output: startOutput || output || undefined };
}

/**
 * Notes what the server's isolates show once it has been loaded: the worker threads it started that the
 * probe could not see (their GC and heap uncounted), and its CPU before it listened, per isolate.
 */
export function noteIsolates(run: ServerRun, server: RunningServer): void {
  const unseen = server.unseenThreads();
  if (unseen.length > 0) run.unseenThreads = unseen;
  run.beforeListening = { cpuSeconds: server.cpuBeforeListening, isolates: Math.max(1, server.isolates()) + unseen.length };
}
