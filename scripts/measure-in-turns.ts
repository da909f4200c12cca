// The steady load with the servers of a verdict in turns: each started and probed, warmed up in turn, then
// loaded in rounds (steady-turns.ts); then, one server at a time, what is judged after the load: the fresh
// copy, the after-load check, the probe again, and the answers the load received held to the contract.
import { afterLoadCheck, probeAgain } from './after-load.ts';
import { judgeBetweenTurns } from './between-turns.ts';
import { judgeOthersInTurns } from './others-during-turns.ts';
import { AnswerSampler, checkAnswers, contractFor } from './answers.ts';
import type { BenchOptions, ServerSpec } from './bench-options.ts';
import type { Exercise } from './exercises.ts';
import { besideFreshCopy } from './fresh-copy.ts';
import { waitUntilIdle } from './idle.ts';
import type { LoadProgress } from './load.ts';
import type { ServerRun } from './result.ts';
import { noteCrash, noteIsolates, withFailure } from './run-failure.ts';
import { startServices, type Services } from './services/index.ts';
import { startAndProbe, type Started } from './start-and-probe.ts';
import { combineHeap, combineRuntime, combineTurns, loadInTurns, turnLoad, warmUpInTurns, type Contender } from './steady-turns.ts';
import { judgedServer, stillTooClose } from './verdict.ts';

/** A server in turns, with what its after-load checks need: its services, how to start a copy of it. */
type InTurns = Contender & Started;

export async function measureInTurns(
  exercise: Exercise,
  specs: ServerSpec[],
  options: BenchOptions,
): Promise<{ runs: ServerRun[]; rounds: number; moreRoundsFor: string[] }> {
  const { manifest } = exercise;
  const runs: ServerRun[] = [];
  const contenders: InTurns[] = [];
  // Servers in turns run at the same time: a shared service (a DNS server's answer rate, a broker's queue)
  // would carry one server's backlog into another's turn, so each server gets services of its own.
  const serviceSets: Services[] = [];
  let rounds = 0;
  // What asked for each round past the fewest: said in the report, so a longer run says why it was longer.
  const moreRoundsFor = new Set<string>();
  try {
    // Starting and probing put no load on the machine to speak of: all servers at once.
    const started = await Promise.all(
      specs.map(async (spec, index) => {
        options.onEvent?.({ type: 'starting', label: spec.run.label, index, of: specs.length });
        const services = await startServices(manifest.services ?? []);
        serviceSets.push(services);
        return startAndProbe(exercise, spec, services, options);
      }),
    );
    for (const entry of started) {
      runs.push(entry.run);
      if (entry.server) contenders.push({ ...entry, sampler: new AnswerSampler(contractFor(manifest, entry.run.role).everyAnswer) });
    }
    const onProgress = (label: string, progress: LoadProgress) => options.onEvent?.({ type: 'load', label, progress });
    const warmedUp = await warmUpInTurns(contenders, manifest.load, onProgress);
    const settle = () => {
      contenders.forEach((c, i) => {
        const turns = c.run.turns ?? [];
        c.run.load = combineTurns(turns, warmedUp[i]!);
        c.run.runtime = combineRuntime(turns.map((t) => t.runtime).filter((r) => r !== undefined));
        c.run.heap = combineHeap(turns);
      });
    };
    rounds = await loadInTurns(contenders, manifest.load, {
      decided: (done) => {
        settle();
        const open = stillTooClose(manifest, runs, done);
        for (const target of open) moreRoundsFor.add(target);
        return open.length === 0;
      },
      onProgress,
      onCrash: ({ run, server }) => noteCrash(run, server, 'during its turn'),
    });
    settle();
    judgeBetweenTurns(runs, judgedServer);
    judgeOthersInTurns(runs, judgedServer);
    // A fresh copy beside each server is load: one server at a time. The checks after it are not: all at once.
    for (const contender of contenders) {
      if (!contender.server.exit()) await beside(exercise, contender, (progress) => onProgress(contender.run.label, progress));
    }
    await Promise.all(
      contenders.map(async (contender) => {
        const { run, server, sampler, contexts } = contender;
        if (!server.exit()) await afterTurns(exercise, contender, options);
        run.answers = checkAnswers(contractFor(manifest, run.role), sampler.samples, contexts, sampler.keyed());
        await server.stop();
        options.onEvent?.({ type: 'done', run });
      }),
    );
  } finally {
    await Promise.all(contenders.map((c) => c.server.stop()));
    for (const services of serviceSets) await services.stop();
  }
  return { runs, rounds, moreRoundsFor: [...moreRoundsFor] };
}

/** For throughputKept: the aged server beside a fresh copy of itself, when it is held to that target. */
async function beside(exercise: Exercise, { run, server, file, startOptions }: InTurns, onProgress: (progress: LoadProgress) => void): Promise<void> {
  const freshCopy = exercise.manifest.load.freshCopy;
  if (!freshCopy || !judgedServer(run)) return;
  try {
    run.freshCopy = await besideFreshCopy(file, startOptions, server, exercise.manifest.load, freshCopy.pairs, onProgress);
    if (server.exit()) noteCrash(run, server, 'beside its fresh copy');
  } catch (error) {
    Object.assign(run, withFailure(run, error, server.output()));
  }
}

/** What is judged after the load, while the server still runs: the probe again, the after-load check. */
async function afterTurns(exercise: Exercise, contender: InTurns, options: BenchOptions): Promise<void> {
  const { manifest } = exercise;
  const { run, server } = contender;
  try {
    noteIsolates(run, server);
    if (manifest.load.settleAfterWarmup) await waitUntilIdle(server);
    // The probe again, for a server that is judged: a reference's answers under load are checked, but
    // its probe after the load would wait out the backlog that is its bug (02's uploads: 20 s).
    if (judgedServer(run)) run.checkAfterLoad = await probeAgain(exercise, contender);
    if (manifest.afterLoad && judgedServer(run) && run.load) {
      // Phases that may leave a request per connection in flight: the warm-up, each turn, each second beside a fresh copy.
      const phases = 1 + (run.turns?.length ?? 0) + 2 * (run.freshCopy?.aged.length ?? 0);
      const load = { answered: run.load.answered, inFlightAtMost: phases * turnLoad(manifest.load).connections };
      run.afterLoad = await afterLoadCheck(exercise, contender, load, options);
    }
    if (server.exit()) noteCrash(run, server, 'after the load');
  } catch (error) {
    Object.assign(run, withFailure(run, error, server.output()));
  }
}
