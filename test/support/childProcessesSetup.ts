import { afterAll, afterEach, beforeEach } from 'vitest';
import { killTrackedChildren, setCurrentTest } from './childProcesses.js';

/*
 * Vitest setup file (vitest.config.ts `setupFiles`): its hooks run in every test file, its after-hooks after
 * the file's own. A failed test's own cleanup may not have run, so the children it started are killed when it
 * ends. A passing test may hand a child to later tests (a `keel serve` restarted mid-suite), so whatever is
 * still alive when the file ends is killed then.
 */

beforeEach(({ task }) => {
  setCurrentTest(task.id);
});

afterEach(async ({ task }) => {
  setCurrentTest(undefined);
  if (task.result?.state === 'fail') await killTrackedChildren({ startedDuring: task.id });
});

afterAll(async () => {
  await killTrackedChildren();
});
