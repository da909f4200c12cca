// Starts one server in its own process and runs the exercise's correctness probe on it: how every
// measurement begins, one server after another, side by side or in turns. A server that gives wrong
// answers is stopped there: loading it would only measure how fast it is wrong.
import { AnswerTimeline } from './answer-timeline.ts';
import type { BenchOptions, ServerSpec } from './bench-options.ts';
import { probeAnswers, runCheck } from './check.ts';
import type { Exercise } from './exercises.ts';
import type { ServerRun } from './result.ts';
import { noteCrash, withFailure } from './run-failure.ts';
import { startServer, type RunningServer, type StartOptions } from './server-process.ts';
import type { ServiceContexts } from './service.ts';
import type { Services } from './services/index.ts';
import { ALONE, type TurnTaker } from './turns.ts';

/** A server that started and passed its probe, with what its load and the checks after the load need. */
export interface Started {
  run: ServerRun;
  server: RunningServer;
  contexts: ServiceContexts;
  /** The server's file and how it was started: a fresh copy of it is started the same way. */
  file: string;
  startOptions: StartOptions;
  /** probeAnswers() of the server's URL when it started (a later server may reuse a port). */
  probedFrom: number;
  /** The load's answers to this server by the time they arrived, over its warm-up, measured phase and turns. */
  timeline: AnswerTimeline;
}

/** A server that did not start or failed its probe: its run says why, and nothing is left running. */
export interface NotStarted {
  run: ServerRun;
  server?: undefined;
}

/**
 * Starts one server and runs the correctness probe; the server is left running only when it passed.
 * Servers side by side (`turns`) start and probe in their turn; `starting` is called in it, first.
 */
export async function startAndProbe(
  exercise: Exercise,
  spec: ServerSpec,
  services: Services,
  options: BenchOptions,
  turns: TurnTaker = ALONE,
  starting: () => void = () => {},
): Promise<Started | NotStarted> {
  const { manifest } = exercise;
  const nodeFlags = [...spec.run.nodeFlags, ...(options.extraNodeFlags ?? [])];
  const run: ServerRun = { ...spec.run, nodeFlags };
  const { env, contexts } = await services.prepare();
  probeEnv(manifest, env);
  const startOptions = { nodeFlags, env, ...(spec.command ? { command: spec.command } : {}) };
  let server: RunningServer;
  try {
    server = await turns.take(async () => {
      starting();
      return startServer(spec.absoluteFile, startOptions);
    });
  } catch (error) {
    return { run: withFailure(run, error) };
  }
  const probedFrom = probeAnswers(server.url);
  const probe = run.role === 'ceiling' ? manifest.ceilingCheck : manifest.check;
  if (probe) {
    run.check = await turns.take(() => runCheck((url) => probe(url, { services: contexts }), server.url));
    options.onEvent?.({ type: 'checked', label: run.label, ok: run.check.ok });
    if (!run.check.ok) {
      // A probe that failed because the server died should say so, with what it printed.
      const exit = await Promise.race([server.exited, new Promise<undefined>((resolve) => setTimeout(resolve, 300))]);
      if (exit && !exit.expected) noteCrash(run, server, 'while it answered the correctness probe');
      await server.stop();
      return { run };
    }
  }
  return { run, server, contexts, file: spec.absoluteFile, startOptions, probedFrom, timeline: new AnswerTimeline() };
}

/** What the manifest asks of the injected probe, as its environment. */
function probeEnv(manifest: Exercise['manifest'], env: NodeJS.ProcessEnv): void {
  if (manifest.probe?.asyncResources) env.HOTPATH_ASYNC_RESOURCES = '1';
  if (manifest.probe?.sampleMs) env.HOTPATH_SAMPLE_MS = String(manifest.probe.sampleMs);
}
