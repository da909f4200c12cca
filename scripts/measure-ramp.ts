// A ramp on one server: the warm-up, then the offered rate climbing step by step past the knee (ramp.ts).
// Ramped servers run side by side and take turns at the machine (`turns`): warm-ups and steps alike.
import { loadEvents, type BenchOptions } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { runWarmup } from './load.ts';
import { measuredFigures, resetFigures } from './probe-figures.ts';
import { resolveRamp, runRamp, type RampRequest } from './ramp.ts';
import type { ServerRun } from './result.ts';
import { noteCrash } from './run-failure.ts';
import type { Started } from './start-and-probe.ts';
import type { TurnTaker } from './turns.ts';

/**
 * Ramps the started server; its run with the figures, or with the crash when it died. The ramp's steps
 * sample no answers, so there are none to hold to the contract.
 */
export async function measureRamp(exercise: Exercise, started: Started, request: RampRequest, options: BenchOptions, turns: TurnTaker): Promise<ServerRun> {
  const { load } = exercise.manifest;
  const { run, server } = started;
  const onProgress = loadEvents(options, run.label);
  // Without a ramp of its own, the exercise warms up at full load and the ramp is set from what it reached.
  const own = load.ramp;
  const fullWarmup = own ? 0 : await turns.take(() => runWarmup(server.url, load, onProgress));
  const ramp = resolveRamp(request, own, fullWarmup / Math.max(1, load.warmupSeconds));
  const warmedUp = own ? await turns.take(() => runWarmup(server.url, load, onProgress, ramp.from)) : fullWarmup;
  const measuredFrom = await resetFigures(server, load);
  const ramped = await runRamp(server.url, load, ramp, onProgress, turns);
  run.load = { ...ramped.load, answered: ramped.load.answered + warmedUp };
  run.ramp = ramped.ramp;
  Object.assign(run, await measuredFigures(server, measuredFrom, load));
  if (server.exit()) noteCrash(run, server, 'during the load');
  return run;
}
