import { defineConfig } from 'vitest/config';

// Three groups, one after another. Files that put no load on the machine run two at a time; the tests
// that load servers but hold nothing to a threshold another load could tip (a verdict far from it, a
// contract, a cancel, a soak to its crash, a profiler, the browser tests, whose live demo is judged
// PASS or FAIL by the author check, not by them) three at a time. The measurements (the author check, the
// known-wrong fixes, the real ramp's knee, kept throughput, a soak whose pace must fall, `workshop
// measure` on the sample service, Artillery beside autocannon) run one at a time.
// `npm run test:unit` runs the first group (quiet), `npm run test:load` the second; the measurements are the last.
const files = (...names: string[]) => names.map((name) => `test/${name}.test.ts`);
const QUIET = files(
  'answers', 'broker-service', 'cluster-probe', 'doctor', 'profile-advice', 'hub-report', 'import-cycles', 'machine-load', 'manifest', 'parent-exit', 'progress',
  'repeat', 'report', 'route-table-service', 'server-process', 'services', 'slides', 'soak', 'stats',
  'statsd-service', 'trend', 'turns', 'typecheck', 'verdict', 'worker-thread-probe',
);
const MEASURE = files('author', 'wrong-fixes', 'ramp', 'fresh-copy', 'soak-pace', 'diagnosis', 'measure', 'artillery');

const shared = { pool: 'forks' as const, testTimeout: 180_000, hookTimeout: 60_000 };
const oneAtATime = { fileParallelism: false, maxWorkers: 1 };

export default defineConfig({
  test: {
    benchmark: { include: ['exercises/**/*.bench.ts'] },
    projects: [
      { test: { ...shared, name: 'quiet', include: QUIET, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      // Three at a time on two cores: these tests spend most of their time waiting on servers and timers.
      { test: { ...shared, maxWorkers: 3, name: 'load', include: ['test/**/*.test.ts'], exclude: [...QUIET, ...MEASURE], sequence: { groupOrder: 1 } } },
      {
        test: {
          ...shared,
          ...oneAtATime,
          name: 'measure',
          include: MEASURE,
          // Only wrong-fixes.test.ts runs tests concurrently: known-wrong fixes, not judged on speed. It
          // caps how many of them are loaded at once itself.
          maxConcurrency: 8,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
