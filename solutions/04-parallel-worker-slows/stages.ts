// Exercise 04's reference stages, its hints and what its profile shows. They name the fix, so they
// live with the solutions; the trainee's folder holds the declaration (exercises/04-parallel-worker-slows/exercise.ts).
// scripts/exercises.ts merges the two into the exercise's manifest.
import { defineSolution } from '../../scripts/manifest.ts';
import { minorGcPerRequest } from '../../scripts/metrics/minor-gc-per-request.ts';
import { requestsPerSecond } from '../../scripts/metrics/requests-per-second.ts';

export default defineSolution({
  stages: [
    {
      file: '1-bigger-semi-space.ts',
      title: 'bigger semi-space',
      changes:
        "Only the Node flag changes: the file's node-flags comment sets --max-semi-space-size=256 instead of the shipped 16, and the code is the shipped code.",
      // Its req/s is shown, not held: a 256 MB young generation pauses long enough to sink a 1 s turn
      // now and then (the brief gives the figures).
      targets: [{ metric: minorGcPerRequest, against: 'broken', atMost: 1 / 3 }],
      nodeMajors: [20],
      otherVersions:
        'measured on Node 22.23.5, a bigger semi-space makes scavenges rarer but each one dearer: the minor-GC share stays at 19-22% for 64, 128 and 256 MB (28% at 16 MB), and req/s gains ~1.15x. On Node 24.22.3 it held in one author check (3.7%, 0.10x) and tipped over in the next (22.6% in 21 scavenges, 0.77x the broken server\'s scavenge time per request, 6 major GCs): pages outlive a scavenge, get promoted, and each scavenge gets dearer. Stage 2 holds on both.',
    },
    {
      file: '2-keep-only-the-totals.ts',
      title: 'keep only the totals',
      changes:
        "Back to the shipped 16 MB semi-space; each page is folded into the refresh's running totals as soon as it is parsed and dropped before the next wait on the bank.",
      targets: [
        { metric: minorGcPerRequest, against: 'broken', atMost: 1 / 3 },
        { metric: requestsPerSecond, against: 'broken', atLeast: 1 },
      ],
    },
  ],
  profile: {
    lookFor:
      "The server's own widest frame is `readStatement` (a quarter to two fifths of the samples here), whose self time is `JSON.parse` of each page, and `(garbage collector)` takes a quarter to over two fifths of all samples: scavenges, the young generation's collector. readStatement keeps every parsed page until the last one arrives, so each scavenge finds them alive and copies them. The share of wall time in scavenges is exact in the runtime table of `run 04 --load`.",
    // Checked by test/diagnosis.test.ts (npm run test:diagnosis), in --tool cpu on Node 20 and 24.
    frames: [
      { name: "readStatement", atLeast: 0.22 },
      { name: "(garbage collector)", atLeast: 0.17 },
    ],
  },
  // What `workshop doctor` names: checked by test/diagnosis.test.ts (npm run test:diagnosis).
  doctor: { shipped: 'gc', final: ['cpu-bound', 'one-core'],
    why: "parsing the bank's pages is CPU work on the main thread, and its loop's busy share and turns sit near the doctor's thresholds for cpu-bound; the collector's share is what fell (figures in docs/doctor.md)" },
  hints: [
    'Load it (`npm run workshop -- run 04 --load`) and read the runtime table under the req/s figures. One column is far from what a worker that mostly waits on a bank should show. How many of them per second, and what share of the time?',
    '"minor GC" is the scavenger, which collects the young generation. In the `--trace-gc` lines (see the brief), look at what each `Scavenge` frees: a few MB per scavenge, and long pauses, mean that most of what was young was still alive when it ran. A scavenge costs what is still alive when it runs, not what died: garbage is free, survivors are copied. What is still alive?',
    'Which objects does a refresh keep alive across its waits on the bank, and how many refreshes are in flight at once? Plaid found the same: each task held on to the data it had fetched while it waited for the bank again, so a scavenge found most of the young objects still alive and had to copy them. Read `readStatement`: what does it keep until the last page has arrived?',
    'The article\'s first fix was a flag. The first line of server.ts, `// node-flags: --max-semi-space-size=16`, pins the young generation\'s semi-space at 16 MB, the default of Node 20 and 22 (Node 24 starts with a larger one, and there the shipped worker spends about half the share of its time in scavenges: 12-28% against 30-48% on Node 20, measured on two 2-core machines). Raising it with `--max-semi-space-size=1024` cut Plaid\'s scavenge time from 30% to 2%: a bigger young generation fills less often, so more of what it holds is dead by then. Stage 1 of the solution changes only this line. Try 32, 64, 128 and 256 (in MB) and watch the "minor GC (n)" column and the process\'s memory. Why is 64 not enough here?',
    'The fix that needs no bigger young generation, and Plaid\'s closing advice: learn how V8 allocates, and reuse or drop objects instead of keeping them. Here, drop: one object reused by 30 refreshes in flight at once is a race. The answer needs a handful of numbers, not the pages. Fold each page into the running totals right after JSON.parse, and let the page go before the next `await`.',
  ],
});
