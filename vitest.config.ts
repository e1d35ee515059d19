import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every file removes the folders test/support/temp.ts made for it.
    setupFiles: ['./test/support/temp-cleanup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The CI reads a plain "N passed, N failed" closing line; the summary reporter prints it.
    reporters: ['default', './test/support/summary-reporter.ts'],
    env: { STEPWISE_DATA: process.env.STEPWISE_DATA ?? new URL('../shared/data', import.meta.url).pathname },
  },
});
