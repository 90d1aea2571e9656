import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { executeToolCall } from '../../../main/tools/execute.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import { artifactNameFor } from '../../../main/tools/runCommandTool.js';
import type { ToolContext, ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, noSandbox, TEST_SECRET, type TempWorkspace } from './helpers.js';

let sandbox: SandboxInfo;
let t: TempWorkspace;
beforeAll(async () => {
  sandbox = await detectSandbox();
});
beforeEach(() => {
  t = makeWorkspace(sandbox);
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('write');
const run = (args: Record<string, unknown>, ctx: ToolContext = t.ctx()): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'run_command', arguments: JSON.stringify(args) }, ctx);

describe('run_command without an OS sandbox', () => {
  it('refuses to run unconfined unless the call was approved', async () => {
    const marker = path.join(t.workspace, 'ran');
    const outcome = await run({ command: `touch ${marker}` }, t.ctx({ sandbox: noSandbox }));
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/No OS sandbox is available.*explicit approval/);
    expect(existsSync(marker)).toBe(false);
  });

  it('rejects bad arguments before anything runs', async () => {
    expect(errorOf((await run({ command: '' })).content)).toMatch(/^invalid arguments: command:/);
    expect(errorOf((await run({ command: 'ls', timeout_ms: '5' })).content)).toBe(
      'invalid arguments: timeout_ms: expected number, got string "5" (send the number without quotes: 5)',
    );
  });
});

describe('run_command in the box', () => {
  beforeEach((context) => {
    if (sandbox.kind === 'none') context.skip(`no OS sandbox on this machine: ${sandbox.reason}`);
  });

  it('runs in the workspace and returns output, exit status and the artifact handle', async () => {
    writeFileSync(path.join(t.workspace, 'in.txt'), 'from the workspace\n');
    const outcome = await run({ command: 'cat in.txt; echo done' });
    const handle = artifactNameFor('ev1-test');
    expect(outcome).toMatchObject({
      isError: false,
      exitCode: 0,
      signal: null,
      timedOut: false,
      artifact: handle,
    });
    expect(outcome.content).toMatch(/^from the workspace\r?\ndone\n\[exit code 0, \d+ ms\]$/);
    expect(readFileSync(path.join(t.sessionDir, 'artifacts', handle), 'utf8')).toContain('done');
  });

  it('runs in cwd, else in the session default, and refuses a cwd that leaves the workspace or is no folder', async () => {
    mkdirSync(path.join(t.workspace, 'persistent', 'project', 'src'), { recursive: true });
    writeFileSync(path.join(t.workspace, 'persistent', 'project', 'here.txt'), 'project file\n');
    const withDefault = t.ctx({ commandCwd: 'persistent/project' });
    expect((await run({ command: 'cat here.txt' }, withDefault)).content).toMatch(/^project file/);
    expect((await run({ command: 'pwd', cwd: 'persistent/project/src' }, withDefault)).content).toMatch(
      /persistent\/project\/src\r?\n/,
    );
    expect((await run({ command: 'pwd', cwd: '.' }, withDefault)).content.split(/\r?\n/)[0]).toBe(
      t.workspace,
    );
    expect((await run({ command: 'pwd' })).content.split(/\r?\n/)[0]).toBe(t.workspace);
    const escaped = await run({ command: 'touch ran', cwd: '../outside' });
    expect(escaped.isError).toBe(true);
    expect(errorOf(escaped.content)).toMatch(/cwd.*escapes the workspace/);
    const missing = await run({ command: 'touch ran', cwd: 'nope' });
    expect(errorOf(missing.content)).toBe('cwd "nope" is not a folder in the workspace');
    const file = await run({ command: 'touch ran', cwd: 'persistent/project/here.txt' });
    expect(errorOf(file.content)).toMatch(/is not a folder/);
    expect(existsSync(path.join(t.workspace, 'ran'))).toBe(false);
  });

  it('a failing command is an error outcome with its exit code', async () => {
    const outcome = await run({ command: 'echo oops >&2; exit 3' });
    expect(outcome).toMatchObject({ isError: true, exitCode: 3 });
    expect(outcome.content).toMatch(/oops[\s\S]*\[exit code 3, \d+ ms\]/);
  });

  it('kills a command at its timeout', async () => {
    const started = Date.now();
    const outcome = await run({ command: 'echo start; sleep 20', timeout_ms: 500 });
    expect(outcome).toMatchObject({ isError: true, timedOut: true });
    expect(outcome.content).toMatch(/\[timed out after 500 ms; the command and its children were killed\]/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('caps a timeout above the limit and says so', async () => {
    const outcome = await run({ command: 'true', timeout_ms: toolLimits.commandMaxTimeoutMs * 10 });
    expect(outcome.content).toContain(`[timeout_ms was capped at ${toolLimits.commandMaxTimeoutMs}]`);
  });

  it('cannot write outside the workspace', async () => {
    const target = path.join(t.outside, 'pwned');
    const outcome = await run({ command: `echo x > ${target}; echo x > $HOME/../pwned2; echo ok` });
    expect(outcome.content).toContain('ok');
    expect(existsSync(target)).toBe(false);
  });

  it('cannot write anything in .git (hooks, config, HEAD) nor move it away: the whole folder is read-only in the box', async () => {
    mkdirSync(path.join(t.workspace, '.git', 'hooks'), { recursive: true });
    writeFileSync(path.join(t.workspace, '.git', 'config'), '[core]\n');
    writeFileSync(path.join(t.workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const outcome = await run({
      command:
        'echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo evil > .git/HEAD; mv .git .git_old; echo end',
    });
    expect(outcome.content).toContain('end');
    expect(existsSync(path.join(t.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(path.join(t.workspace, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(path.join(t.workspace, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(existsSync(path.join(t.workspace, '.git_old'))).toBe(false);
  });

  it('streams output live and redacts what the model sees', async () => {
    const chunks: string[] = [];
    const outcome = await run(
      { command: `echo live; echo ${TEST_SECRET}` },
      t.ctx({ onOutput: (c) => chunks.push(c) }),
    );
    expect(chunks.join('')).toContain('live');
    expect(chunks.join('')).not.toContain(TEST_SECRET);
    expect(outcome.content).toMatch(/\[REDACTED[^\]]*\]/);
    expect(outcome.content).not.toContain(TEST_SECRET);
  });

  it('stops when the call is aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const outcome = await run({ command: 'sleep 20' }, t.ctx({ signal: controller.signal }));
    expect(outcome.content).toMatch(/stopped by the user/);
  });
});
