import { configDefaults, defineConfig } from 'vitest/config';

/*
 * Files that judge time or the whole machine, so they run alone, one after another, once every other file is
 * done (Vitest puts a project with maxWorkers 1 in its own group, last): a file running beside them would
 * change what they measure, not what they test.
 */
const ALONE = [
  // Kills Keel at random moments of a 2 s command; a kill that lands after the command's echo is "late", and
  // fewer than half the trials may be. A loaded machine makes more trials late.
  'test/main/cli/killDuringCommand.test.ts',
  // Browser timings with bounds (list < 2 s, first diff < 5 s, warm < 2.5 s) and frame counts.
  'test/renderer/performance.test.ts',
  'test/renderer/changes.test.ts',
  // The first todo plan must be on screen within expect.poll's second, while the reply streams.
  'test/renderer/plan.test.ts',
  // Counts every process on the machine around a fork bomb: another file's Chromium or Keel would count too.
  'test/main/runner/limits.test.ts',
];

/*
 * Workers: Vitest's default is one less than the cores, which on CI's 2-core machine is ONE worker: the suite ran
 * file after file (~20 min) on about one core. Its ~1250 s of CPU (mostly child processes: the built CLI, bwrap,
 * git, Chromium) fit two cores; a third worker adds no CPU and starves single tests (measured: test/README.md
 * "Workers").
 */
const WORKERS = 2;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The user's own ~/.claude, ~/.agents, ~/.keel (issue 30) never reach a test: a test that wants a user's
    // setup points KEEL_USER_HOME at a temp folder of its own.
    env: { KEEL_USER_HOME: '/nonexistent/keel-test-user-home' },
    maxWorkers: WORKERS,
    // Kills the child processes a test started (test/support/childProcesses.ts) when it fails or its file ends.
    setupFiles: ['./test/support/childProcessesSetup.ts'],
    // One Chromium for the browser test files, launched when the first asks (test/renderer/chromiumBroker.ts).
    globalSetup: ['./test/renderer/chromiumBroker.ts'],
    reporters: ['default', './test/support/summaryReporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ALONE],
        },
      },
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1 } },
    ],
  },
});
