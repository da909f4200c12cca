// Exercise 03's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/03-ten-tasks-a-second/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { cpuPerAnswer } from '../../scripts/metrics/cpu-per-answer.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

export default defineSolution({
  stages: [
    {
      file: '1-jsonstream.ts',
      title: 'JSONStream instead of bfj',
      changes:
        "bfj.streamify, which wrote every JSON token into zlib as its own chunk, is replaced by JSONStream.stringify('[', ',', ']'), which writes one chunk per trace event.",
      targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 5 }],
    },
    {
      file: '2-stringify-then-deflate.ts',
      title: 'one string, one deflate',
      changes:
        "No stream: the trace is serialized with one JSON.stringify, compressed with one zlib.deflate call and turned into base64 with Buffer#toString.",
      // Not req/s: at the verdict's 3 connections stage 2 waits on the bank more than it works, so its req/s
      // over stage 1's shrinks as the machine gets faster; the work a task costs does not (solution README).
      targets: [{ metric: cpuPerAnswer, against: 'previous', atMost: 0.25 }],
    },
  ],
  profile: {
    lookFor:
      "A task that waits 20 ms on the bank takes seconds. Between a tenth and a third of the samples are in bfj's streamify (`node_modules/bfj/`), and between a quarter and a little over half in `node:zlib`, with `processChunk` at the top of zlib's stacks; `(idle)`, the loop waiting (the server's start and exit included), takes from under a tenth to a third. The slower the machine's round trips to the thread pool, the more in zlib and the less idle. bfj hands the deflate stream thousands of tiny chunks per task, and each one goes through the stream machinery to the thread pool and back before the next: the task's time goes to those round trips, chunk after chunk.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "(idle)", atLeast: 0.05 },
      { file: "node_modules/bfj/", atLeast: 0.07 },
      { file: "node:zlib", atLeast: 0.15 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'cpu-bound', final: ['cpu-bound', 'one-core'],
    why: "under the load's 30 connections the fixed worker answers a hundred times more tasks, and one JSON.stringify and one deflate a task keep its core busy: where the machine is slower its busy share passes the doctor's 88% on Node 20, and it is named cpu-bound like the shipped one, with its loop delay p99 well under half the shipped one's (figures in docs/doctor.md)" },
  hints: [
    "Load it (`npm run workshop -- run 03 --load`) and set the figures beside what a task does. It waits 20 ms on the bank, yet an answer takes seconds (p50) and only a handful finish a second, while the node process keeps a core busy (watch `top` during the load). Something in the handler costs far more than the bank's wait. Time its steps with performance.now(): which one takes the time? Plaid's logs pointed at the same step: it once took 4 minutes, against a usual task of 4 seconds.",
    "Profile it with a flame graph (the 0x command is in the README) and search for `zlib`, then for `bfj`. Measured with `npm run workshop -- profile 03 --tool cpu` on two 2-core machines, Node 20 and 24: a quarter to over half of the samples under node:zlib, with processChunk at its top, and a tenth to a third under bfj (node_modules/bfj/); the slower the machine's round trips to the thread pool, the larger zlib's share. Count the chunks: `let n = 0; stream.on('data', () => n++)` on bfj.streamify(trace), and log n when it ends. How many writes does zlib get for one task?",
    "Benchmark locally, as Plaid did: `npm run bench` runs the same trace through bfj, JSONStream, json-stream-stringify and JSON.stringify, each on its own and into zlib. Plaid's benchmark found bfj ~5x slower than JSONStream, and they swapped it. Compare each serializer alone with the same serializer into zlib: what costs more, the serializer or what happens to its output?",
    'bfj pushes every token of the JSON as a chunk of its own (each brace, comma, key and value): about 16,000 for one task. Each chunk is a separate write into zlib, and each zlib write is a round trip to the libuv thread pool. The article switched to JSONStream, which writes one chunk per value you give it.',
    "JSONStream.stringify(open, separator, close) runs JSON.stringify on each value written to it. Write the trace's events one by one. Its defaults ('[\\n', '\\n,\\n', '\\n]\\n') add newlines; the probe wants exactly JSON.stringify's text, so pass '[', ',' and ']'. That is stage 1, about 15x.",
    'JSONStream still makes one zlib write per event, about 1,600 per task. The trace already sits in memory whole, and it is ~65 KB: JSON.stringify it, deflate it in one call (promisify(zlib.deflate)) and .toString(\'base64\') the result. To keep streaming, join the chunks into 64 KB blocks before createDeflate instead. `npm run bench` compares them all.',
  ],
});
