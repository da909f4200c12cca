// Exercise 05's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/05-waiting-worker-busy-cpu/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

export default defineSolution({
  stages: [
    {
      file: '1-pino-with-redaction-paths.ts',
      title: 'pino with redaction paths',
      changes:
        "The hand-made logger (deep copy, regular-expression redaction, hand-built JSON) is replaced by pino, with the secrets named by their redaction paths at start-up; the log calls and the lines they write are unchanged.",
      targets: [{ metric: requestsPerSecond, against: 'broken', atLeast: 1.6 }],
    },
  ],
  profile: {
    lookFor:
      "Search for `info` or `redact`: the hand-made logger's `write` holds over half of all samples here (53-57% on Node 20, 64-74% on 24), with `redact` (a fifth to a third) and `toJson` (an eighth to a fifth) under it, where `scrubString`, `isSecretKey` and `escapeJson` run. `write` begins with a deep copy (`JSON.parse(JSON.stringify(...))`, its self time), `redact` runs every regular expression over every key and string, and `toJson` escapes every string again. That is the 15% or more of the CPU the article found, and more.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "write", file: "0-as-shipped.ts", atLeast: 0.38 },
      { name: "redact", atLeast: 0.17 },
      { name: "toJson", atLeast: 0.12 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'cpu-bound', final: ['cpu-bound', 'one-core'],
    why: "with redaction by path the worker answers two to three times more tasks under the load's 60 connections, and each still writes ~11 KB of log lines on the main thread: where the machine is slower its loop's busy share and turns pass the doctor's 88% and 15 ms, and it is named cpu-bound like the shipped one, with its loop delay p99 under half the shipped one's (figures in docs/doctor.md)" },
  hints: [
    'Compare the figures with what the bank allows. With 60 tasks at a time and a ~20 ms bank, the worker could finish about 2,600 tasks a second; the shipped one does about a third of that, and its p50 latency is more than three times the bank\'s. Watch `top` while it runs under load (`npm run workshop -- run 05 --load`): the node process keeps most of a core busy (70% to all of one, depending on the machine), for a worker that should mostly wait. The bank is not the limit: every millisecond the event loop spends on one task delays the other 59. So the question is not what the worker waits for, but what it computes between the waits.',
    'Profile it under load (README.md, "How to see it", gives the commands) and search the flame graph, as Plaid did. Plaid searched theirs for `logger` and found that building the worker\'s log lines took at least 15% of the CPU. Search yours for `Logger`: how much of the graph lights up, and how much of that is redacting and formatting rather than writing to the file?',
    'Look at what is stacked on top of `write`: `redact`, `scrubString`, `isSecretKey`, `toJson`, `escapeJson`, and the `RegExp:` frames of the compiled patterns. Measured with `node --cpu-prof` under the exercise\'s load, on two 2-core machines, Node 20 and 24: 60-76% of the busy samples are under `Logger.write`, 29-37% in redaction and its regular expressions, 18-23% in `toJson` and `escapeJson`, the rest of it in the deep copy and the write. The worker\'s own work (restify, the body parser, the bank) is most of what is left. Plaid\'s article names the same two costs: regular expressions, and a lot of work on object properties.',
    'Count what Logger.write touches for one task (a task of the load writes ~11 KB of log in 5 lines). Every line is deep-copied (JSON.parse of JSON.stringify), then every key is tested against SECRET_KEYS and run through eight SECRET_PATTERNS, every string is run through the eight patterns and escaped by two more, and the line is built by hand. The "transactions fetched" line alone carries 50 transactions of 8 fields each. Each regular expression is fast on its own; about 13,000 of them per task (~900 keys and strings, each meeting 10 to 18 patterns) are not. The shape of each line is known when the log call is written: the secrets can be found by their paths instead of by scanning everything.',
    "Plaid cut the logging CPU by 75%. pino 10.4.0 is installed. `pino(options, pino.destination(process.env.LOG_FILE ?? 1))` writes one JSON line per call, `log.info(fields, msg)` takes the same arguments as this file's logger, and the lines have the same shape (level 30, time, pid, hostname, your fields, msg). Its `redact` option takes the paths of the secrets, e.g. 'credentials.password' or 'accounts[*].number', compiles them once at start-up and visits only those; its default censor is already \"[Redacted]\".",
    'Name every secret by its path, in every line that carries it. Read each log.info call: the Authorization header sits under request.headers; the logged task carries accessToken, credentials.password, credentials.mfa.answer and each account\'s number; "bank login" has its own credentials; "bank answered" has session.token and the accounts\' numbers; "transactions fetched" has accessToken. Ten paths in all. If you miss one, the probe names the secret it found in the log.',
  ],
});
