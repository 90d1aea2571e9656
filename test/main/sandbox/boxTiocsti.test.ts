import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapCommand, type SandboxInfo } from '../../../main/sandbox/box.js';
import { boxedSandbox, createArea, run, waitFor, type RunnerArea } from '../runner/runnerFixtures.js';

/**
 * Keystroke injection (TIOCSTI, CVE-2017-5226): a sandboxed command pushes characters into the input
 * queue of the terminal it shares, and the shell that launched the sandbox runs them after it exits.
 * bwrap's --new-session puts the command in a session without that terminal, so the ioctl fails.
 */

const INJECTOR = `
import fcntl, os, sys, termios
payload = sys.argv[1]
for target in ('stdin', '/dev/tty'):
    try:
        fd = 0 if target == 'stdin' else os.open(target, os.O_RDWR)
        for ch in payload:
            fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
        print('INJECTED via ' + target)
    except OSError as error:
        print('BLOCKED ' + target + ' errno=' + str(error.errno))
print('INJECTOR-FINISHED')
`;

let area: RunnerArea;
let sandbox: SandboxInfo;
let injector: string;

beforeAll(async () => {
  area = createArea();
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
  injector = path.join(area.workspace, 'inject.py');
  writeFileSync(injector, INJECTOR);
});
afterAll(() => area.cleanup());

function legacyTiocstiEnabled(): boolean {
  try {
    return readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() === '1';
  } catch {
    return true;
  }
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Types `argv` into an interactive bash on its own pty (the "user's terminal"), waits for it, and
 * reports whether keystrokes the command injected were then executed by that outer shell.
 */
async function injectionReachesParentShell(
  argv: string[],
  marker: string,
): Promise<{ reached: boolean; output: string }> {
  const outer = spawn('bash', ['--norc', '--noprofile', '-i'], {
    cols: 200,
    rows: 30,
    cwd: area.root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm', PS1: '$ ', HOME: area.root },
  });
  let output = '';
  outer.onData((data) => (output += data));
  try {
    outer.write(`${argv.map(shellQuote).join(' ')}\n`);
    const finished = await waitFor(() => output.includes('INJECTOR-FINISHED\r\n'), 10_000);
    expect(finished, output).toBe(true);
    // Anything injected sits in the outer shell's input queue ahead of this line.
    outer.write('echo OUTER-$((40+2))-DONE\n');
    const done = await waitFor(() => output.includes('OUTER-42-DONE'), 10_000);
    expect(done, output).toBe(true);
    return { reached: existsSync(marker), output };
  } finally {
    outer.kill('SIGKILL');
  }
}

describe('keystroke injection (TIOCSTI)', () => {
  it('fails inside the runner: the boxed command has no controlling terminal to inject into', async () => {
    const marker = path.join(area.root, 'injected-by-runner');
    const result = await run(area, sandbox, `python3 inject.py ${shellQuote(`touch ${marker}\n`)}`);
    expect(result.excerpt).toContain('INJECTOR-FINISHED');
    expect(result.excerpt).not.toContain('INJECTED via');
    expect(result.excerpt).toMatch(/BLOCKED stdin errno=(1|5|25)/);
    expect(existsSync(marker)).toBe(false);
  });

  it('does not reach the terminal of the shell that launched the box, though it would without --new-session', async (context) => {
    const boxed = (marker: string) =>
      wrapCommand({
        sandbox,
        command: `python3 ${injector} ${shellQuote(`touch ${marker}\n`)}`,
        workspace: area.workspace,
        network: 'none',
      }).argv;

    const protectedMarker = path.join(area.root, 'injected-protected');
    const protectedRun = await injectionReachesParentShell(boxed(protectedMarker), protectedMarker);
    expect(protectedRun.output).toContain('BLOCKED stdin');
    expect(protectedRun.reached).toBe(false);

    if (!legacyTiocstiEnabled()) {
      context.skip(
        'the kernel disables TIOCSTI (dev.tty.legacy_tiocsti=0): the control cannot inject either',
      );
      return;
    }
    // Control: the same box without --new-session lets the injection through, so this test can fail.
    const controlMarker = path.join(area.root, 'injected-control');
    const control = await injectionReachesParentShell(
      boxed(controlMarker).filter((word) => word !== '--new-session'),
      controlMarker,
    );
    expect(control.output).toContain('INJECTED via stdin');
    expect(control.reached).toBe(true);
  });
});
