import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import {
  killAllRunningCommands,
  MAX_TIMEOUT_MS,
  RunCommandError,
  runCommand,
} from '../../../main/runner/boxedCommand.js';
import { boxedSandbox, createArea, noSandbox, run, type RunnerArea } from './runnerFixtures.js';

let area: RunnerArea;
let sandbox: SandboxInfo;

beforeAll(async () => {
  area = createArea();
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
});
afterAll(() => area.cleanup());

describe('runCommand', () => {
  it('reports the exit code and keeps the whole output in the artifact', async () => {
    const result = await run(area, sandbox, 'echo hello from the box; exit 3');
    expect(result.exitCode).toBe(3);
    expect(result.signal).toBeNull();
    expect(result.timedOut).toBe(false);
    expect(result.sandbox).toBe('bwrap');
    expect(result.excerpt).toBe('hello from the box\n');
    expect(readFileSync(result.artifact, 'utf8')).toBe('hello from the box\r\n');
    expect(result.bytes).toBe(20);
    expect(result.truncated).toBe(false);
  });

  it('streams output live and never splits a UTF-8 character between chunks', async () => {
    const chunks: string[] = [];
    // Multi-byte characters arrive split over two writes 100 ms apart: decoding per chunk would give U+FFFD.
    const command =
      "printf 'a\\xe2'; sleep 0.1; printf '\\x82\\xacb\\n'; printf '\\xf0\\x9f'; sleep 0.1; printf '\\x98\\x80\\n'";
    const result = await run(area, sandbox, command, { onData: (text) => chunks.push(text) });
    expect(chunks.join('')).toBe('a€b\r\n😀\r\n');
    for (const chunk of chunks) expect(chunk).not.toContain('\uFFFD');
    expect(result.excerpt).toBe('a€b\n😀\n');
  });

  it('strips ANSI sequences from the excerpt but keeps them in the live stream and artifact', async () => {
    let live = '';
    const result = await run(area, sandbox, "printf '\\033[31mred\\033[0m plain\\n'", {
      onData: (t) => (live += t),
    });
    expect(live).toContain('\u001b[31m');
    expect(readFileSync(result.artifact, 'utf8')).toContain('\u001b[31m');
    expect(result.excerpt).toBe('red plain\n');
  });

  it('gives a command waiting for input no stdin: it hits its timeout and the call returns', async () => {
    const started = Date.now();
    const result = await run(area, sandbox, 'echo waiting; read line; echo "got $line"', { timeoutMs: 800 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGKILL');
    expect(result.excerpt).toContain('waiting');
    expect(result.excerpt).not.toContain('got');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a command cannot open the terminal to prompt for a password', async () => {
    const result = await run(area, sandbox, 'echo secret > /dev/tty && echo opened; cat /dev/tty; echo done');
    expect(result.excerpt).not.toContain('opened');
    expect(result.excerpt).toContain('done');
    expect(result.timedOut).toBe(false);
  });

  it('an abort signal kills the command and resolves with what was captured', async () => {
    const controller = new AbortController();
    const pending = run(area, sandbox, 'echo started; sleep 30', {
      signal: controller.signal,
      onData: (text) => {
        if (text.includes('started')) controller.abort();
      },
    });
    const result = await pending;
    expect(result.aborted).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.signal).toBe('SIGKILL');
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('session end kills every running command', async () => {
    let started = 0;
    const onData = (text: string): void => {
      if (text.includes('started')) started += 1;
    };
    const runs = [
      run(area, sandbox, 'echo started; sleep 30', { onData }),
      run(area, noSandbox, 'echo started; sleep 30', { onData }),
    ];
    const deadline = Date.now() + 5_000;
    while (started < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await killAllRunningCommands();
    for (const result of await Promise.all(runs)) {
      expect(result.signal).toBe('SIGKILL');
      expect(result.exitCode).toBeNull();
      expect(result.durationMs).toBeLessThan(8_000);
    }
  });

  it('sets the non-interactive environment and the idempotency key', async () => {
    const result = await run(
      area,
      sandbox,
      'echo "$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$TERM|$KEEL_IDEMPOTENCY_KEY|$HOME|$TMPDIR"',
      { idempotencyKey: 'ev7-run_command' },
    );
    expect(result.excerpt.trim()).toBe('cat|cat|0|xterm-256color|ev7-run_command|/tmp/home|/tmp');
  });

  it("keeps Keel's own secrets out of the child environment", async () => {
    process.env.KEEL_TEST_PROVIDER_API_KEY = 'sk-keel-own-key-0123456789abcdef';
    try {
      const result = await run(
        area,
        sandbox,
        'echo "[${KEEL_TEST_PROVIDER_API_KEY:-unset}]"; env | grep -c KEEL_TEST_PROVIDER || true',
      );
      expect(result.excerpt).toContain('[unset]');
      expect(readFileSync(result.artifact, 'utf8')).not.toContain('sk-keel-own-key');
    } finally {
      delete process.env.KEEL_TEST_PROVIDER_API_KEY;
    }
  });

  it('redacts a secret from the environment in the live stream, the artifact and the excerpt, even split across writes', async () => {
    const secret = 'tok_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    let live = '';
    const command = `echo "value=$DEPLOY_TOKEN"; printf 'split=${secret.slice(0, 10)}'; sleep 0.1; printf '${secret.slice(10)}\\n'`;
    const result = await run(area, sandbox, command, {
      env: { DEPLOY_TOKEN: secret },
      onData: (t) => (live += t),
    });
    for (const text of [live, readFileSync(result.artifact, 'utf8'), result.excerpt]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(10));
      expect(text).toContain('value=');
      expect(text).toContain('split=');
    }
  });

  it('refuses to run without a sandbox unless this command was approved', async () => {
    await expect(
      runCommand({
        command: 'true',
        workspace: area.workspace,
        sandbox: noSandbox,
        artifactPath: path.join(area.artifacts, 'x'),
      }),
    ).rejects.toThrow(RunCommandError);
    const approved = await run(area, noSandbox, 'echo unconfined');
    expect(approved.excerpt).toBe('unconfined\n');
    expect(approved.sandbox).toBe('none');
  });

  it('clamps the timeout to the 30 minute cap and rejects a working directory outside the workspace', async () => {
    const result = await run(area, sandbox, 'true', { timeoutMs: 99 * 3_600_000 });
    expect(result.limits.timeoutMs).toBe(MAX_TIMEOUT_MS);
    await expect(run(area, sandbox, 'true', { cwd: area.outside })).rejects.toThrow(/outside the workspace/);
  });
});
