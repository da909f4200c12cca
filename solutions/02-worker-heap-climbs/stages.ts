// Exercise 02's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/02-worker-heap-climbs/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { backlogGrowth } from '../../scripts/metrics/backlog-growth.ts';
import { heapGrowth } from '../../scripts/metrics/heap-growth.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';
import { timersPeak } from '../../scripts/metrics/timers-peak.ts';

export default defineSolution({
  stages: [
    {
      file: '1-raise-the-heap-limit.ts',
      title: 'raise the heap limit',
      changes:
        "Only the Node flag changes: --max-old-space-size goes from the container's 1,536 MB to 6,144 MB, and the code is the shipped code.",
      // Still piling up: its timers, one per upload waiting, read 0.77-1.20x the shipped server's; its heap's
      // slope, noisier over 6 s, 0.49-4.0x; its backlog 0.55-1.10x, as low as the shipped file's own reading
      // in the same run (see the solution's README).
      targets: [
        { metric: timersPeak, against: 'broken', atLeast: 0.5 },
        { metric: backlogGrowth, against: 'broken', atLeast: 0.4 },
        { metric: heapGrowth, against: 'broken', atLeast: 0.3 },
      ],
    },
    {
      file: '2-size-the-agent.ts',
      title: 'size the S3 agent',
      changes:
        "The S3 client gets an HTTP agent with 512 sockets instead of the SDK's default 50, so uploads no longer queue in the agent with their payloads.",
      targets: [
        { metric: heapGrowth, against: 'broken', atMost: 0.75 },
        { metric: timersPeak, against: 'broken', atMost: 0.4 },
        { metric: backlogGrowth, against: 'broken', atMost: 0.15 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 0.35 },
      ],
    },
    {
      file: '3-bound-the-uploads.ts',
      title: 'bound the uploads',
      changes:
        "Keeps stage 2's agent and bounds the uploads: at most 256 run at once, and a task waits for a free slot before it answers.",
      targets: [
        { metric: heapGrowth, against: 'broken', atMost: 0.75 },
        { metric: timersPeak, against: 'broken', atMost: 0.4 },
        { metric: backlogGrowth, against: 'broken', atMost: 0.15 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 0.35 },
      ],
    },
  ],
  profile: {
    lookFor:
      "This bug is memory, and a CPU profile shows only its cost: `node:zlib` compressing payloads (a tenth to a fifth of the samples here), the AWS SDK's HTTP stack in the `@smithy/` packages (a fifth) and the `(garbage collector)` (a sixteenth to a seventh). None of them says that memory piles up: the heap growth of `run 02 --load` does, and the `Timeout`s in its active resources say what waits. The payloads are the uploads nobody awaited, each kept until it gets one of the SDK's 50 sockets to S3.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { file: "node:zlib", atLeast: 0.06 },
      { file: "@smithy/", atLeast: 0.12 },
      { name: "(garbage collector)", atLeast: 0.04 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'memory-grows', final: ['cpu-bound', 'one-core'],
    why: "each task's trace is serialized, base64-encoded and sent through the S3 client on the main thread: CPU work the job needs, in turns of tens of ms; the memory no longer grows" },
  hints: [
    'Watch the heap, not the req/s: `npm run workshop -- run 02 --load` prints heap growth in MB/s over the measured phase. A steady worker grows ~0 MB/s. What does this one keep that it has finished with?',
    "Read `active resources (peak)` in the same table: thousands of `Timeout`s for a worker that runs 30 tasks at once, and after the load, payloads keep arriving in the bucket for seconds. Each S3 request the client has not finished keeps a timer. So uploads are waiting. Why would an upload wait, when S3 answers every request in about 500 ms?",
    "The growth is work left over after each answer. Which call in the route is neither awaited nor bounded? `@typescript-eslint/no-floating-promises` would flag it; Plaid found theirs by searching for the places where that rule was switched off. Each of those calls holds its task's trace and its compressed payload on the heap until it is done: count how many are still pending when the load stops.",
    "The pending uploads are not slow to compress; they are waiting for a socket. ~300 tasks a second at 500 ms per upload need ~150 uploads in flight (rate x time). Node's own agent has no socket limit, but the AWS SDK's HTTP handler (v3, like the v2 client in the article) allows 50 sockets per host. What happens to the 51st upload, and to the payload it holds?",
    "Give the S3 client an agent sized for the work: `requestHandler: { httpAgent: { keepAlive: true, maxSockets: 512 } }`. That was Plaid's fix. Do not simply await each upload before answering: that stops the growth too, but makes every task 500 ms longer (30 connections then answer at most 60 tasks a second, under 0.35x the shipped server's, which misses the target).",
    'The upload still floats: if S3 slows down, the pile comes back. Bound the uploads themselves, so a slow S3 slows the worker instead of filling its heap: a fixed number of upload slots (256, say), and a task waits for a free slot before it answers. Every payload must still be uploaded.',
  ],
});
