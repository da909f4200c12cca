// One live run of the hub, in its own process (forked per run with `node --import tsx`), so a stuck run can
// be ended without ending the hub. It measures through the same harness as the CLI and sends each
// BenchEvent and the final RunReport to the hub over IPC. It stops every server it started and exits when
// the hub says cancel, when a signal arrives, or when the hub goes away (the IPC channel closes).
import type { BenchEvent, ServerChoice } from '../bench.ts';
import { specFor } from '../bench.ts';
import { loadExercise, resolveExerciseId } from '../exercises.ts';
import { runBenchRepeated } from '../repeat.ts';
import type { RunReport } from '../result.ts';
import { killAllNow, liveServerPids, stopAll } from '../server-process.ts';
import { removeServiceDataNow } from '../services/index.ts';

/** What the hub asks for: argv[2] as JSON. The hub checked it; the worker checks it again. */
export interface WorkerJob {
  exercise: string;
  servers: ServerChoice[];
}

export type WorkerMessage =
  | { type: 'event'; event: BenchEvent }
  /** The pids (= process groups) of the servers alive now, so the hub can end them if it must kill this process. */
  | { type: 'pids'; pids: number[] }
  | { type: 'report'; report: RunReport }
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

  const job = JSON.parse(process.argv[2] ?? '{}') as Partial<WorkerJob>;
  const servers = Array.isArray(job.servers) ? job.servers : [];
  if (typeof job.exercise !== 'string' || servers.length === 0) throw new Error('run-worker: no exercise or servers given');
  const exercise = await loadExercise(resolveExerciseId(job.exercise));
  // specFor throws for a stage or ceiling the exercise does not have.
  const specs = servers.map((choice) => specFor(exercise, choice));
  const report = await runBenchRepeated(
    exercise,
    specs,
    {
      onEvent: (event) => {
        reportPids();
        void send({ type: 'event', event });
      },
    },
    1,
  );
  clearInterval(pidTimer);
  if (stopping) return;
  await send({ type: 'report', report });
  process.exit(0);
}

main().catch(async (error: unknown) => {
  if (stopping) return;
  await send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  await stopAndExit(1);
});
