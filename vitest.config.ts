import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Kills the child processes a test started (test/support/childProcesses.ts) when it fails or its file ends.
    setupFiles: ['./test/support/childProcessesSetup.ts'],
    reporters: ['default', './test/support/summaryReporter.ts'],
  },
});
