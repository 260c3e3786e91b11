import { defineConfig } from 'vitest/config';

// Two projects: unit tests are pure and start nothing; integration and end-to-end tests share one real
// control plane, one Azurite and one development CA started by the global setup.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The machine has two cores; the real control plane needs one of them.
    maxWorkers: 2,
    // CI also writes a machine-readable summary, from which .ci/run prints its closing tally.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'results/vitest.json' }]] : ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/setup/global-setup.ts'],
        },
      },
    ],
  },
});
