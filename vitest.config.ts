import { defineConfig } from 'vitest/config';

// Load tests must not compete for the two cores: one file at a time, in one worker.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    benchmark: { include: ['exercises/**/*.bench.ts'] },
    fileParallelism: false,
    maxWorkers: 1,
    pool: 'forks',
    // Only wrong-fixes.test.ts runs tests concurrently: known-wrong fixes, mostly waiting, not judged on speed.
    maxConcurrency: 8,
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
