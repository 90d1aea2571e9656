import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openInteractiveTerminal } from '../../main/runner/interactive.js';
import { boxedSandbox, createArea, run, type RunnerArea } from '../main/runner/runnerFixtures.js';

/*
 * node-pty opens every pty master without close-on-exec, so each later child of Keel inherited the masters
 * of the ptys open at the time, and bwrap passes inherited fds into the box: a command's box held the master
 * of another running command's pty, or of the user's interactive terminal. Through it the command could read
 * that output before Keel did (the other run's artifact and exit marker lost) or type into the user's shell.
 * The launcher now closes every inherited fd but 0-2 (main/runner/lifeline.ts).
 */

let area: RunnerArea;
beforeEach(() => {
  area = createArea();
});
afterEach(() => {
  area.cleanup();
});

/** What the box's PID 1 (the wrapper) and the command's shell hold: `ls -l` lines, `N -> target`. */
const LIST_FDS = 'ls -l /proc/1/fd/ /proc/$$/fd/';

describe('a box inherits no other pty of Keel', () => {
  it("holds no master of another command's pty, nor of the user's terminal", async () => {
    const sandbox = await boxedSandbox();
    const terminal = await openInteractiveTerminal({ workspace: area.workspace, sandbox });
    try {
      const other = run(area, sandbox, 'sleep 3');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const listing = await run(area, sandbox, LIST_FDS);
      expect(listing.exitCode, listing.excerpt).toBe(0);
      const lines = listing.excerpt.split('\n').filter((line) => / -> /.test(line));
      expect(lines.length).toBeGreaterThan(0);
      // Only stdin, stdout and stderr: the box's own pty.
      expect(lines.filter((line) => /ptmx|pipe:|socket:/.test(line))).toEqual([]);
      await other;
    } finally {
      await terminal.kill();
    }
  });
});
