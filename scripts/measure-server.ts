// One server measured on its own, or side by side with others that take turns at the machine (ramps):
// start it and probe it, load it the way the run asks, judge what the load left, stop it. Each way of
// loading is a module of its own (measure-steady.ts, measure-ramp.ts, measure-soak.ts); what they share,
// from the start to the stop, is here, once.
import { afterLoadCheck, probeAgain } from './after-load.ts';
import type { BenchOptions, ServerSpec } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { waitUntilIdle } from './idle.ts';
import { measureRamp } from './measure-ramp.ts';
import { measureSoak } from './measure-soak.ts';
import { measureSteady } from './measure-steady.ts';
import type { ServerRun } from './result.ts';
import { noteCrash, noteIsolates, withFailure } from './run-failure.ts';
import type { Services } from './services/index.ts';
import { startAndProbe, type Started } from './start-and-probe.ts';
import { ALONE, type TurnTaker } from './turns.ts';
import { judgedServer } from './verdict.ts';

/** Servers measured side by side (`turns`) put load on the machine only in their turn; `starting` is called in the first. */
export async function measureServer(
  exercise: Exercise,
  spec: ServerSpec,
  services: Services,
  options: BenchOptions,
  turns: TurnTaker = ALONE,
  starting: () => void = () => {},
): Promise<ServerRun> {
  const started = await startAndProbe(exercise, spec, services, options, turns, starting);
  return started.server ? measureStarted(exercise, started, options, turns) : started.run;
}

/** A server that started and passed its probe, loaded the way the run asks, judged, and stopped. */
export async function measureStarted(exercise: Exercise, started: Started, options: BenchOptions, turns: TurnTaker = ALONE): Promise<ServerRun> {
  const { manifest } = exercise;
  const { run, server } = started;
  try {
    if (options.checkOnly) return run;
    await measureOneWay(exercise, started, options, turns);
    // A server that died under the load has its crash noted in its run: nothing after the load can be judged.
    if (server.exit()) return run;
    noteIsolates(run, server);
    if (judgedServer(run)) {
      if (manifest.load.settleAfterWarmup) await waitUntilIdle(server);
      run.checkAfterLoad = await probeAgain(exercise, started, turns);
    }
    if (manifest.afterLoad && judgedServer(run)) {
      // Phases that may leave a request per connection in flight: the warm-up, the measured phase, and
      // each second beside a fresh copy.
      const phases = 2 + 2 * (run.freshCopy?.aged.length ?? 0);
      const load = { answered: run.load!.answered, inFlightAtMost: phases * manifest.load.connections };
      run.afterLoad = await afterLoadCheck(exercise, started, load, options, turns);
      if (server.exit()) noteCrash(run, server, 'after the load');
    }
    return run;
  } catch (error) {
    return withFailure(run, error, server.output());
  } finally {
    await server.stop();
  }
}

/** The way of loading the run asks for (`run --soak`, `run --ramp`), or else the exercise's: its ramp, or steady. */
function measureOneWay(exercise: Exercise, started: Started, options: BenchOptions, turns: TurnTaker): Promise<ServerRun> {
  const { measure } = options;
  if (measure?.kind === 'soak') return measureSoak(exercise, started, measure.soak, options);
  if (measure?.kind === 'ramp') return measureRamp(exercise, started, measure.ramp, options, turns);
  if (exercise.manifest.load.ramp) return measureRamp(exercise, started, {}, options, turns);
  return measureSteady(exercise, started, options);
}
