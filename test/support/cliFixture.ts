import { afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { ensureCliBuilt } from './cli.js';
import { keel } from './keelProcess.js';
import type { ProviderServerOptions } from './providerServer.js';
import { closeSessionFixture, type SessionFixture, startSessionFixture } from './sessionFixture.js';

/**
 * The running test's session fixture (its fields change from test to test: read them inside a test, a hook
 * or a helper a test calls), with the CLI crash tests' one shared step.
 */
export type CliFixture = SessionFixture & {
  /**
   * Runs `keel` with the crash switches in `crash` (KEEL_CRASH_AT, KEEL_CRASH_KIND) and fails the test, with
   * the process's stderr, unless it was killed there (SIGKILL).
   */
  killedAt(args: readonly string[], crash: NodeJS.ProcessEnv): Promise<Awaited<ReturnType<typeof keel>>>;
};

/**
 * A CLI test file's lifecycle, as every test in test/main/cli had it written out: the CLI built once
 * (beforeAll), a fresh temp home, empty project folder and scripted provider server for each test (beforeEach,
 * `prepare` then seeds them: files in the project, a tmpfs home), closed after it (afterEach, `cleanup`
 * first, then the server stopped and the folder removed). Call it at the top level of the test file.
 */
export function useCliFixture(
  prefix: string,
  options: {
    server?: ProviderServerOptions;
    prepare?: (fixture: SessionFixture) => void | Promise<void>;
    cleanup?: (fixture: SessionFixture) => void | Promise<void>;
  } = {},
): CliFixture {
  let current: SessionFixture | undefined;
  const now = (): SessionFixture => {
    if (current === undefined) throw new Error('the CLI fixture exists only while a test runs');
    return current;
  };

  beforeAll(async () => {
    await ensureCliBuilt();
  }, 180_000);

  beforeEach(async () => {
    current = await startSessionFixture(prefix, { server: options.server });
    await options.prepare?.(current);
  });

  afterEach(async () => {
    const fixture = current;
    current = undefined;
    if (fixture === undefined) return;
    await options.cleanup?.(fixture);
    await closeSessionFixture(fixture);
  });

  return {
    get dir() {
      return now().dir;
    },
    get home() {
      return now().home;
    },
    get project() {
      return now().project;
    },
    get server() {
      return now().server;
    },
    async killedAt(args, crash) {
      const run = await keel(now().home, args, crash);
      expect(run.signal, run.stderr).toBe('SIGKILL');
      return run;
    },
  };
}
