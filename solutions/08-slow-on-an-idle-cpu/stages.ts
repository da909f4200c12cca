// Exercise 08's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/08-slow-on-an-idle-cpu/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { latencyP99 } from '../../scripts/metrics/latency-p99.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

export default defineSolution({
  stages: [
    {
      file: '1-batch-every-second.ts',
      title: 'batch every second',
      changes:
        "A decision's event goes into a bounded queue in memory and the answer leaves at once; the queue is published as one batch message once a second (or as soon as 2,000 events wait), and once more on SIGTERM, before the exit.",
      targets: [
        { metric: latencyP99, against: 'broken', atMost: 0.2 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 2 },
      ],
    },
  ],
  profile: {
    lookFor:
      "Its finding is an absence. About four fifths of the samples are `(idle)`, and mqtt.js (`node_modules/mqtt`) takes a few percent, yet p99 is hundreds of milliseconds. Each request waits for its own broker acknowledgement, one at a time per connection, and waiting on I/O costs no CPU, so no frame grows with it: time the send with a timer around the await, as the README's step 3 shows.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "(idle)", atLeast: 0.55 },
      { file: "node_modules/mqtt", atLeast: 0.014 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'waiting', final: [] },
  hints: [
    'Run it alone first: `curl` answers in a few milliseconds. Then `npm run workshop -- run 08 --load`: p99 in the hundreds of milliseconds, and the CPU is not the limit (the event loop delay stays low). What does every request wait for?',
    "Time the publish, as Klarna graphed the time it took to produce messages to Kafka: put the timer of step 3 of the brief around `producer.publishAsync(...)` in `record()`, run `npm run workshop -- run 08` and load it from a second terminal. Compare the publish time with the request latency, and the sends per second with req/s.",
    "Each request waits for the broker's acknowledgement of its own event. The broker acknowledges one producer's messages one after another, a few milliseconds each, as a Kafka broker serves one connection's requests in order: how many acknowledgements a second can one producer get, and how long does the 50th request in line wait?",
    'The answer does not depend on the event having been stored, so the request need not wait for its own send. Could many decisions share one publish, and one acknowledgement? Klarna queued the messages in memory and sent them in batches once a second (the 2.5 s the brief allows is a one-second batch plus a margin). The broker counts a message that is a JSON array as that many events.',
    "Batch, but keep every event: bound the queue and decide what a full queue does (make the request wait for room, or count what you drop and say so), and on SIGTERM stop taking requests, publish what is queued, wait for its acknowledgement (`publishAsync` with `{ qos: 1 }`), then exit. The after-load check stops your server with SIGTERM and counts the events.",
  ],
});
