import { realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admitBoxedRun } from '../../../main/runner/admit.js';
import { RunCommandError, runCommand } from '../../../main/runner/boxedCommand.js';
import { InteractiveTerminalError, openInteractiveTerminal } from '../../../main/runner/interactive.js';
import { createArea, noSandbox, type RunnerArea } from './runnerFixtures.js';

const schema = z.object({
  workspace: z.string().min(1),
  cwd: z.string().min(1).optional(),
  unconfinedApproved: z.boolean().optional(),
});
const words = {
  what: 'test',
  unconfined: 'this run needs approval.',
  fail: (message: string) => new TypeError(message),
};
const boxed = { ...noSandbox, kind: 'bwrap' as const, reason: 'test: boxed' };

let area: RunnerArea;
beforeEach(() => {
  area = createArea();
});
afterEach(() => area.cleanup());

describe('admitBoxedRun: the checks before any boxed run starts', () => {
  it('returns the parsed options and the real workspace and working directory (default: the workspace)', () => {
    const link = path.join(area.root, 'link');
    symlinkSync(area.workspace, link);
    const admitted = admitBoxedRun(schema, { workspace: link }, boxed, words);
    expect(admitted).toEqual({
      input: { workspace: link },
      workspace: realpathSync(area.workspace),
      cwd: realpathSync(area.workspace),
    });
    expect(admitBoxedRun(schema, { workspace: link, cwd: area.outside }, boxed, words).cwd).toBe(
      realpathSync(area.outside),
    );
  });

  it("refuses invalid options, naming them and each problem, with the caller's error", () => {
    expect(() => admitBoxedRun(schema, { workspace: '' }, boxed, words)).toThrow(TypeError);
    expect(() => admitBoxedRun(schema, { workspace: '', cwd: 3 }, boxed, words)).toThrow(
      /^Invalid test options: .+; .+$/,
    );
  });

  it('refuses an unconfined run unless the user approved exactly that', () => {
    expect(() => admitBoxedRun(schema, { workspace: area.workspace }, noSandbox, words)).toThrow(
      `No OS sandbox is available (${noSandbox.reason}); this run needs approval.`,
    );
    expect(
      admitBoxedRun(schema, { workspace: area.workspace, unconfinedApproved: true }, noSandbox, words)
        .workspace,
    ).toBe(realpathSync(area.workspace));
  });

  it('refuses a workspace or working directory that does not exist', () => {
    const missing = path.join(area.root, 'missing');
    expect(() => admitBoxedRun(schema, { workspace: missing }, boxed, words)).toThrow(
      `The workspace ${missing} does not exist.`,
    );
    expect(() => admitBoxedRun(schema, { workspace: area.workspace, cwd: missing }, boxed, words)).toThrow(
      `The working directory ${missing} does not exist.`,
    );
  });

  it('a command and a terminal refuse the same way, each with its own error', async () => {
    const missing = path.join(area.root, 'missing');
    const command = runCommand({
      command: 'true',
      workspace: missing,
      sandbox: boxed,
      artifactPath: path.join(area.artifacts, 'a.log'),
    });
    await expect(command).rejects.toThrow(RunCommandError);
    await expect(command).rejects.toThrow(`The workspace ${missing} does not exist.`);
    const terminal = openInteractiveTerminal({ workspace: missing, sandbox: boxed });
    await expect(terminal).rejects.toThrow(InteractiveTerminalError);
    await expect(terminal).rejects.toThrow(`The workspace ${missing} does not exist.`);
    await expect(
      runCommand({ command: '', workspace: area.workspace, sandbox: boxed, artifactPath: 'x' }),
    ).rejects.toThrow('Invalid command options: the command is empty');
    await expect(
      openInteractiveTerminal({ workspace: area.workspace, sandbox: boxed, cols: 1 }),
    ).rejects.toThrow(/^Invalid terminal options: /);
  });
});
