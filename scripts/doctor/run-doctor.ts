// One run of the doctor, as `workshop doctor` and the hub's run worker both make it: the server starting,
// then each second of the load, reported as the bench's events; the result is the same DoctorResult.
import { specFor, type BenchEvent, type ServerChoice } from '../bench.ts';
import type { Exercise } from '../exercises.ts';
import { observe } from './observe.ts';
import { doctorResult, type DoctorResult } from './result.ts';

export async function runDoctor(exercise: Exercise, choice: ServerChoice, onEvent: (event: BenchEvent) => void): Promise<DoctorResult> {
  const startedAt = new Date().toISOString();
  const spec = specFor(exercise, choice);
  const { label } = spec.run;
  const { load } = exercise.manifest;
  onEvent({ type: 'starting', label, index: 0, of: 1 });
  const observation = await observe(exercise, spec, { onProgress: (progress) => onEvent({ type: 'load', label, progress }) });
  return doctorResult(observation, load.warmupSeconds + load.durationSeconds, startedAt);
}
