import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The machine has two cores and the tests share one real control plane.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
