// Exercise 09's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/09-one-core-busy/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { DOES_THE_WORK, SCALES_OUT, USES_THE_CORES } from '../../exercises/09-one-core-busy/exercise.ts';

export default defineSolution({
  stages: [
    {
      file: '1-one-worker-per-core.ts',
      title: 'one worker per core',
      changes:
        "The primary process forks one node:cluster worker per core, each running the unchanged service on the shared port, and replaces a worker that dies while serving.",
      targets: [USES_THE_CORES, SCALES_OUT, DOES_THE_WORK],
    },
  ],
  profile: {
    lookFor:
      "Nearly every sample, four fifths to nine tenths here, is in `fibonacci` (server.ts), called from the route handler: the process is busy computing, not waiting, and no frame is wasted work. What a profile cannot show is the core that sits idle: compare the busy time with `top` during the load (press 1 for one line per core).",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "fibonacci", atLeast: 0.6 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'one-core', final: [] },
  hints: [
    'Ramp the load and read it step by step: `npm run workshop -- run 09 --ramp`. Up to which offered rate does the answered rate follow? What does p99 do one step later, and the step after that?',
    "While the load runs, watch the machine in another terminal (`top`, then press 1 for one line per core). How busy is the server's process, and how busy is the machine? Compare with `node -p 'require(\"os\").availableParallelism()'`.",
    'Do the arithmetic: one request is ~7-11 ms of CPU, so one core answers at most about 90-150 of them a second, and the knee sits just there. The profile (`npm run workshop -- profile 09`) is nearly all `fibonacci`: the process is CPU-bound and no line of it is wasted. What it cannot show is the core that sits idle.',
    'The work is JavaScript on the CPU, and it stays as it is. async/await, a faster framework or a bigger heap would not help: one Node process runs your JavaScript on one thread, so on one core. How could several processes answer on the same port?',
    "node:cluster. In the primary (`cluster.isPrimary`), call `cluster.fork()` once per core (`os.availableParallelism()`); in a worker, create and listen the restify server exactly as before: the workers share the port. Replace a worker that dies: `cluster.on('exit', ...)` forks another unless `worker.exitedAfterDisconnect`. The report's runtime figures then come from the primary only; the load's figures count every process.",
  ],
});
