// The exercise's steady load on one server on its own (a plain `run --load`, a known-wrong fix, an
// exercise whose servers are not loaded in turns): warm-up, measured phase, then, for a verdict, the
// server beside a fresh copy of itself; the answers the load received held to the contract.
import { AnswerSampler, checkAnswers, contractFor } from './answers.ts';
import { loadEvents, type BenchOptions } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { FinishedWork } from './finished-work.ts';
import { besideFreshCopy } from './fresh-copy.ts';
import { runLoad, type LoadProgress } from './load.ts';
import { measuredFigures, resetFigures } from './probe-figures.ts';
import { ProcessMeter } from './process-figures.ts';
import { Seconds } from './doctor/seconds.ts';
import type { ServerRun } from './result.ts';
import { noteCrash } from './run-failure.ts';
import type { Started } from './start-and-probe.ts';

/** Loads the started server; its run with the figures, or with the crash when it died (nothing more to judge). */
export async function measureSteady(exercise: Exercise, started: Started, options: BenchOptions): Promise<ServerRun> {
  const { load } = exercise.manifest;
  const { run, server } = started;
  const onProgress = loadEvents(options, run.label);
  const sampler = new AnswerSampler(contractFor(exercise.manifest, run.role).everyAnswer);
  const processes = new ProcessMeter(server);
  // For the doctor: each second of both phases, not the wait between them (settleAfterWarmup).
  const seconds = options.seconds ? new Seconds(server, { 'warm-up': load.warmupSeconds, measured: load.durationSeconds }) : undefined;
  let measuredFrom = 0;
  const finished = exercise.manifest.finishedWork ? new FinishedWork(exercise.manifest.finishedWork, started.contexts) : undefined;
  const beforeMeasured = async () => {
    await seconds?.stop();
    measuredFrom = await resetFigures(server, load);
    await finished?.begin();
    processes.begin();
    await seconds?.start();
  };
  await seconds?.start();
  const onLoad = seconds ? (progress: LoadProgress) => (seconds.onLoad(progress), onProgress(progress)) : onProgress;
  const inSlot = options.loadSlot ?? ((work) => work());
  run.load = await inSlot(() => runLoad(server.url, load, onLoad, beforeMeasured, sampler, started.timeline));
  run.processes = processes.lap();
  if (finished) run.finishedWork = await finished.end();
  await seconds?.stop();
  if (seconds) run.seconds = { load: seconds.load, server: seconds.server };
  Object.assign(run, await measuredFigures(server, measuredFrom, load));
  if (server.exit()) {
    noteCrash(run, server, 'during the load');
    return run;
  }
  // The fresh copy is for a verdict; a run that is not judged (a plain run, a known-wrong fix) has none.
  if (load.freshCopy && options.judge !== false) {
    run.freshCopy = await besideFreshCopy(started.file, started.startOptions, server, load, load.freshCopy.pairs, onProgress);
    if (server.exit()) {
      noteCrash(run, server, 'beside its fresh copy');
      return run;
    }
  }
  run.answers = checkAnswers(contractFor(exercise.manifest, run.role), sampler.samples, started.contexts, sampler.keyed());
  return run;
}
