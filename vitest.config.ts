import { defineConfig } from 'vitest/config';

// Load tests must not compete for the two cores: one file at a time, in one worker.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    benchmark: { include: ['exercises/**/*.bench.ts'] },
    fileParallelism: false,
    maxWorkers: 1,
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
