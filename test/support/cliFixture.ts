import { beforeAll, expect } from 'vitest';
import { ensureCliBuilt } from './cli.js';
import { keel } from './keelProcess.js';
import { type SessionFixture, type SessionFixtureHooks, useSessionFixture } from './sessionFixture.js';

/** The running test's session fixture (see `useSessionFixture`), with the CLI crash tests' one shared step. */
export type CliFixture = SessionFixture & {
  /**
   * Runs `keel` with the crash switches in `crash` (KEEL_CRASH_AT, KEEL_CRASH_KIND) and fails the test, with
   * the process's stderr, unless it was killed there (SIGKILL).
   */
  killedAt(args: readonly string[], crash: NodeJS.ProcessEnv): Promise<Awaited<ReturnType<typeof keel>>>;
};

/**
 * A CLI test file's lifecycle, as every test in test/main/cli had it written out: the CLI built once
 * (beforeAll), and `useSessionFixture`'s fresh temp home, empty project folder and scripted provider server
 * for each test, `prepare`d before it and closed after it. Call it at the top level of the test file.
 */
export function useCliFixture(prefix: string, hooks: SessionFixtureHooks = {}): CliFixture {
  beforeAll(async () => {
    await ensureCliBuilt();
  }, 180_000);
  const fixture = useSessionFixture(prefix, hooks);
  // Object.assign keeps the fixture's getters (the running test's fields) and adds the crash step.
  return Object.assign(fixture, {
    async killedAt(args: readonly string[], crash: NodeJS.ProcessEnv) {
      const run = await keel(fixture.home, args, crash);
      expect(run.signal, run.stderr).toBe('SIGKILL');
      return run;
    },
  });
}
