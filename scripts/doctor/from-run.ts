// The doctor's reading of a plain `run --load`: the observation `doctor` makes, taken from the run's own
// figures (its seconds over both phases, the probe's over the measured phase), so the run can name the
// kinds of problem in a line and send the trainee to `doctor` for the evidence.
import os from 'node:os';
import type { Exercise } from '../exercises.ts';
import type { ServerRun } from '../result.ts';
import type { Observation } from './observe.ts';
import { doctorResult, type DoctorResult } from './result.ts';

export function doctorOfRun(exercise: Exercise, run: ServerRun): DoctorResult | undefined {
  if (!run.seconds || !run.load) return undefined;
  const { load } = exercise.manifest;
  const observation: Observation = {
    exercise: exercise.manifest.id,
    label: run.label,
    file: run.file,
    node: process.version,
    cores: os.availableParallelism(),
    connections: load.connections,
    loadSeconds: run.seconds.load,
    serverSeconds: run.seconds.server,
    ...(run.runtime ? { runtime: run.runtime } : {}),
    // Not the run's heap trend: without the doctor's full collections at the measured phase's ends it
    // cannot tell garbage promoted to the old generation from a leak (observe.ts).
    requests: run.load.answered,
    // The probe's figures cover the measured phase only.
    runtimeRequests: run.load.requests,
    errors: run.load.errors + run.load.timeouts + run.load.non2xx,
    ...(run.failure ? { failure: run.failure } : {}),
  };
  return doctorResult(observation, load.warmupSeconds + load.durationSeconds);
}
