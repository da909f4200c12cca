// Exercise 01's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/01-seed-service-slows-down/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

export default defineSolution({
  stages: [
    {
      file: '1-fix-the-guard.ts',
      title: 'fix the guard',
      changes:
        "The guard in attachAfterEvent remembers in a boolean, afterEventAttached, that the 'after' listener is on the server, instead of counting the listeners of the response (a new emitter for every request, which never has one), so the first request adds the only listener; and the line that set events.defaultMaxListeners to Infinity is removed so a leak like this warns again.",
      targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 20 }],
    },
    {
      file: '2-etag-from-the-route.ts',
      title: 'ETag from the route',
      changes:
        "The 'after' listener and its hashing are gone: the route sets the ETag from the seed bytes it has just drawn, and the middleware only sets Cache-Control.",
      // Its gain over stage 1 is shown, not held; against the ceiling, see the brief for why 0.55x.
      targets: [{ metric: requestsPerSecond, against: 'ceiling', atLeast: 0.55 }],
    },
    {
      file: '3-json-by-res-end.ts',
      title: 'JSON written by res.end',
      changes:
        "The article's last step: the route serializes its body itself and writes it with its headers by res.writeHead and res.end, past restify's res.send and its formatters. Here it measures about the same as stage 2 (see the README): the target is the framework's fastest path, the ceiling.",
      targets: [{ metric: requestsPerSecond, against: 'ceiling', atLeast: 0.55 }],
    },
  ],
  profile: {
    lookFor:
      "Most of the time, three quarters to four fifths of the samples here on Node 20 and 24, is not under the /seed/v1 route but under `emit` (node:events): the anonymous `after` listener that `attachAfterEvent` adds (line 23 of the shipped file), run once per listener for every response. Inside it, `sha512Hex` hashes the body (crypto's `update` and `digest`), about half of all samples, and the listener's own time is `JSON.stringify` serializing that body again. Once fixed, the listener runs once per response and is a sliver of the graph.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "emit", file: "node:events", atLeast: 0.55 },
      { name: "sha512Hex", atLeast: 0.3 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'cost-grows', final: [] },
  hints: [
    'Load the same server twice in a row (keep `npm run workshop -- run 01` running and run the autocannon line it prints twice): the longer it has been up, the slower it gets. What could grow with every request it has served? Then open the flame graph of `npm run workshop -- profile 01 --stage broken`: the widest stack is not the /seed/v1 route. Which event is being emitted, and by what?',
    'Something is added on every request and never removed, and Node would warn about it, but `server.ts` has switched that warning off. Delete the line `events.defaultMaxListeners = Infinity`, then start the server with `npm run workshop -- run 01 --trace-warnings` and send it a dozen requests (`for i in $(seq 12); do curl -s -o /dev/null http://127.0.0.1:3000/seed/v1; done`). Read the `MaxListenersExceededWarning` and follow its stack down to your own code: the warning and its stack name the culprit.',
    "Count them: add `console.log(server.listenerCount('after'));` inside the `/seed/v1` handler for a while and watch the number as you send requests. What number did you expect? One listener would do; how many are there, and what does each one do on every response?",
    "Read the guard at the top of attachAfterEvent: it returns when an 'after' listener is already there. Which emitter does it ask, and on which emitter does the function add the listener? How many 'after' listeners does a response ever have?",
    "The guard counts the listeners of the response, a new object for every request that never has an 'after' listener, so it never returns, while the listener goes on the server. Remember that it is attached (a boolean in etagger, set on the first call) and the server is ~100x faster. To go further: the 'after' listener still hashes the whole serialized body after every response; the route knows what it sends and can name the ETag itself.",
  ],
});
