// One live run of the hub, in its own process (forked per run with `node --import tsx`), so a stuck run can
// be ended without ending the hub. It runs through the same harness as the CLI: servers under load judged
// as verify and demo judge them (a RunReport), or the doctor on one server as `doctor` runs it (a
// DoctorResult, doctor/run-doctor.ts). It sends each BenchEvent and the final result to the hub over IPC. It stops
// every server it started and exits when the hub says cancel, when a signal arrives, or when the hub goes
// away (the IPC channel closes).
import type { BenchEvent, ServerChoice } from '../bench.ts';
import { specFor } from '../bench.ts';
import type { DoctorResult } from '../doctor/result.ts';
import { loadExercise, resolveExerciseId } from '../exercises.ts';
import { runBenchRepeated } from '../repeat.ts';
import type { RunReport } from '../result.ts';
import { killAllNow, liveServerPids, stopAll } from '../server-process.ts';
import { removeServiceDataNow } from '../services/index.ts';
import { runDoctor } from '../doctor/run-doctor.ts';

/** What a page may ask the hub to run. */
export type RunRequest =
  /** These servers under the exercise's load, one after another, judged as verify and demo judge them. */
  | { kind: 'bench'; servers: ServerChoice[] }
  /** The doctor on one server, as `npm run workshop -- doctor` runs it. */
  | { kind: 'doctor'; server: ServerChoice };

/** What the hub asks this process for: argv[2] as JSON. The hub checked it; the worker checks it again. */
export type WorkerJob = RunRequest & { exercise: string };

export type WorkerMessage =
  | { type: 'event'; event: BenchEvent }
  /** The pids (= process groups) of the servers alive now, so the hub can end them if it must kill this process. */
  | { type: 'pids'; pids: number[] }
  /** The end of a 'bench' job. */
  | { type: 'report'; report: RunReport }
  /** The end of a 'doctor' job: the hub writes it where `doctor` writes its results. */
  | { type: 'doctor'; result: DoctorResult }
  | { type: 'failed'; message: string };

export type HubMessage = { type: 'cancel' };

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send!(message, undefined, {}, () => resolve());
  });
}

let stopping = false;
async function stopAndExit(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stopAll();
  removeServiceDataNow();
  process.exit(code);
}

let lastPids = '';
function reportPids(): void {
  const pids = liveServerPids();
  const key = pids.join(',');
  if (key === lastPids) return;
  lastPids = key;
  void send({ type: 'pids', pids });
}

async function main(): Promise<void> {
  process.on('exit', () => {
    killAllNow();
    removeServiceDataNow();
  });
  process.on('message', (message: HubMessage) => {
    if (message?.type === 'cancel') void stopAndExit(0);
  });
  // The hub died or closed the channel: nobody can see this run, so it ends.
  process.on('disconnect', () => void stopAndExit(0));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAndExit(1));
  const pidTimer = setInterval(reportPids, 250);

  const job = parseJob(process.argv[2]);
  const exercise = await loadExercise(resolveExerciseId(job.exercise));
  const onEvent = (event: BenchEvent) => {
    reportPids();
    void send({ type: 'event', event });
  };
  // specFor throws for a stage or ceiling the exercise does not have.
  const last: WorkerMessage =
    job.kind === 'doctor'
      ? { type: 'doctor', result: await runDoctor(exercise, job.server, onEvent) }
      : { type: 'report', report: await runBenchRepeated(exercise, job.servers.map((choice) => specFor(exercise, choice)), { onEvent }, 1) };
  clearInterval(pidTimer);
  if (stopping) return;
  await send(last);
  process.exit(0);
}

function parseJob(argument: string | undefined): WorkerJob {
  const job = JSON.parse(argument ?? '{}') as Record<string, unknown>;
  if (typeof job.exercise !== 'string') throw new Error('run-worker: no exercise given');
  const isChoice = (value: unknown): value is ServerChoice => typeof value === 'string' || typeof value === 'number';
  if (job.kind === 'doctor' && isChoice(job.server)) return { kind: 'doctor', exercise: job.exercise, server: job.server };
  if (job.kind === 'bench' && Array.isArray(job.servers) && job.servers.length > 0 && job.servers.every(isChoice)) {
    return { kind: 'bench', exercise: job.exercise, servers: job.servers };
  }
  throw new Error(`run-worker: not a job: ${argument}`);
}

main().catch(async (error: unknown) => {
  if (stopping) return;
  await send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  await stopAndExit(1);
});
