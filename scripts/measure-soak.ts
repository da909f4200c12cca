// A soak on one server: the warm-up, then the steady load for minutes, window by window (soak.ts); the
// answers the load received held to the contract.
import { AnswerSampler, checkAnswers, contractFor } from './answers.ts';
import { loadEvents, type BenchOptions } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { runWarmup } from './load.ts';
import { measuredFigures, resetFigures } from './probe-figures.ts';
import type { ServerRun } from './result.ts';
import { noteCrash } from './run-failure.ts';
import { runSoak, type SoakOptions } from './soak.ts';
import type { Started } from './start-and-probe.ts';

/** Soaks the started server; its run with the figures, or with the crash when it died. */
export async function measureSoak(exercise: Exercise, started: Started, soak: SoakOptions, options: BenchOptions): Promise<ServerRun> {
  const { load } = exercise.manifest;
  const { run, server } = started;
  const onProgress = loadEvents(options, run.label);
  const sampler = new AnswerSampler(contractFor(exercise.manifest, run.role).everyAnswer);
  const warmedUp = await runWarmup(server.url, load, onProgress);
  const measuredFrom = await resetFigures(server, load);
  // The soak stops when the server exits, rather than load a dead port for the minutes left.
  const soakOptions = { ...soak, serverExited: () => server.exit() !== undefined };
  const soaked = await runSoak(server.url, load, soakOptions, () => server.samples.slice(measuredFrom), onProgress, sampler);
  run.load = { ...soaked.load, answered: soaked.load.answered + warmedUp };
  run.soak = soaked.soak;
  Object.assign(run, await measuredFigures(server, measuredFrom, load));
  if (server.exit()) {
    noteCrash(run, server, 'during the load');
    return run;
  }
  run.answers = checkAnswers(contractFor(exercise.manifest, run.role), sampler.samples, started.contexts, sampler.keyed());
  return run;
}
