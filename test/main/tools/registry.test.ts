import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { createRedactor } from '../../../main/sandbox/redact.js';
import { hashBytes } from '../../../main/tools/outcome.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import { errorOf, makeWorkspace, TEST_SECRET, type TempWorkspace } from './helpers.js';

let t: TempWorkspace;
beforeEach(() => {
  t = makeWorkspace();
  writeFileSync(path.join(t.workspace, 'a.txt'), 'one\ntwo\n');
});
afterEach(() => t.cleanup());

const call = (name: string, args: unknown) => ({
  id: 'c1',
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('registries by mode', () => {
  it('read-only mode registers exactly the four read tools, todo (planning changes nothing) and web_fetch', () => {
    expect(createToolRegistry('read-only').names()).toEqual([
      'read_file',
      'list_dir',
      'glob',
      'grep',
      'todo',
      'web_fetch',
    ]);
  });

  it('write mode adds write_file, edit_file, apply_patch, run_command and the background command tools', () => {
    expect(createToolRegistry('write').names()).toEqual([
      'read_file',
      'list_dir',
      'glob',
      'grep',
      'todo',
      'web_fetch',
      'write_file',
      'edit_file',
      'apply_patch',
      'run_command',
      'command_output',
      'stop_command',
    ]);
  });

  it('a read-only registry cannot produce a write tool, even asked by name', () => {
    const registry = createToolRegistry('read-only');
    for (const name of [
      'write_file',
      'edit_file',
      'apply_patch',
      'run_command',
      'command_output',
      'stop_command',
      '__proto__',
      'constructor',
      'toString',
    ]) {
      expect(registry.get(name)).toBeUndefined();
    }
    expect(registry.definitions().map((d) => d.name)).not.toContain('write_file');
  });

  it('a write_file call in read-only mode is a tool error and writes nothing', async () => {
    const outcome = await executeToolCall(
      createToolRegistry('read-only'),
      call('write_file', { path: 'new.txt', content: 'x' }),
      t.ctx(),
    );
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/unknown tool "write_file" in read-only mode/);
    expect(existsSync(path.join(t.workspace, 'new.txt'))).toBe(false);
  });

  it('gives providers JSON Schema generated from the zod schemas', () => {
    const defs = createToolRegistry('write').definitions();
    const edit = defs.find((d) => d.name === 'edit_file');
    expect(edit?.parameters).toMatchObject({
      type: 'object',
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
      properties: { replace_all: { type: 'boolean' }, path: { type: 'string' } },
    });
    const read = defs.find((d) => d.name === 'read_file');
    expect(read?.parameters).toMatchObject({
      required: ['path'],
      properties: { offset: { type: 'integer' } },
    });
    for (const def of defs) {
      expect(def.parameters).not.toHaveProperty('$schema');
      expect(def.description.length).toBeGreaterThan(20);
    }
  });

  it('hands out copies of the definitions, so a caller cannot change the registry', () => {
    const registry = createToolRegistry('read-only');
    const first = registry.definitions();
    (first[0]?.parameters as { properties: Record<string, unknown> }).properties.evil = { type: 'string' };
    expect(JSON.stringify(registry.definitions())).not.toContain('evil');
  });
});

describe('each tool describes itself to the approval gate and to resume', () => {
  const write = createToolRegistry('write', { subagents: true });
  const tool = (name: string) => {
    const found = write.get(name);
    if (!found) throw new Error(`no ${name} in the write registry`);
    return found;
  };

  it('reads re-run, edits apply by recorded images, commands ask, subagents resume their child', () => {
    const rules = Object.fromEntries(write.names().map((name) => [name, tool(name).resume.rule]));
    expect(rules).toEqual({
      read_file: 'rerun',
      list_dir: 'rerun',
      glob: 'rerun',
      grep: 'rerun',
      todo: 'rerun',
      web_fetch: 'rerun',
      write_file: 'recorded_images',
      edit_file: 'recorded_images',
      apply_patch: 'recorded_images',
      run_command: 'ask',
      command_output: 'rerun',
      stop_command: 'rerun',
      spawn_subagent: 'child_session',
    });
  });

  it('a file change previews its path, diff, protection and the images resume will check, writing nothing', async () => {
    const preview = await tool('edit_file').preview(
      { path: 'a.txt', old_string: 'two', new_string: TEST_SECRET },
      t.ctx(),
    );
    expect(preview).toMatchObject({
      ok: true,
      subject: { path: 'a.txt' },
      protectedReason: null,
      images: { preImageHash: hashBytes('one\ntwo\n'), postImageHash: hashBytes(`one\n${TEST_SECRET}\n`) },
    });
    expect(preview.ok && preview.diff).toContain('+[REDACTED]');
    const hook = await tool('write_file').preview({ path: '.git/hooks/pre-push', content: 'x' }, t.ctx());
    expect(hook).toMatchObject({ ok: true, subject: { path: '.git/hooks/pre-push' } });
    expect(hook.ok && hook.protectedReason).toMatch(/\.git/);
    expect(existsSync(path.join(t.workspace, '.git'))).toBe(false);
  });

  it('a file change that cannot apply previews as its tool error: there is nothing to approve', async () => {
    const preview = await tool('edit_file').preview(
      { path: 'a.txt', old_string: 'nope', new_string: 'x' },
      t.ctx(),
    );
    expect(preview.ok).toBe(false);
    expect(!preview.ok && errorOf(preview.outcome.content)).toMatch(/old_string was not found/);
  });

  it('a command previews its command; a read its resolved path, or none when the path escapes', async () => {
    expect(await tool('run_command').preview({ command: 'npm test' }, t.ctx())).toEqual({
      ok: true,
      subject: { command: 'npm test' },
      protectedReason: null,
    });
    expect(await tool('read_file').preview({ path: './a.txt' }, t.ctx())).toEqual({
      ok: true,
      subject: { path: 'a.txt' },
      protectedReason: null,
    });
    expect(await tool('read_file').preview({ path: '../outside/x' }, t.ctx())).toEqual({
      ok: true,
      subject: {},
      protectedReason: null,
    });
  });
});

describe('executeToolCall turns bad calls into tool errors', () => {
  const registry = createToolRegistry('write');

  it.each([
    ['wrong type', { path: 5 }, 'invalid arguments: path: expected string, got number'],
    ['missing argument', {}, 'invalid arguments: path: required (expected string)'],
    ['unknown argument', { path: 'a.txt', mode: 'x' }, 'invalid arguments: unknown argument "mode"'],
    [
      'non-integer offset',
      { path: 'a.txt', offset: 1.5 },
      'invalid arguments: offset: expected integer, got 1.5',
    ],
    ['null', null, 'invalid arguments: expected a JSON object'],
    ['array', [1], 'invalid arguments: expected a JSON object'],
  ])('%s', async (_name, args, expected) => {
    const outcome = await executeToolCall(registry, call('read_file', args), t.ctx());
    expect(outcome).toMatchObject({ isError: true });
    expect(outcome.content).toBe(JSON.stringify({ error: expected }));
  });

  it('a zero offset names the argument and the bound', async () => {
    const outcome = await executeToolCall(registry, call('read_file', { path: 'a.txt', offset: 0 }), t.ctx());
    expect(errorOf(outcome.content)).toBe('invalid arguments: offset: must be at least 1, got 0');
  });

  it('bad JSON', async () => {
    const outcome = await executeToolCall(registry, call('read_file', '{"path": "a.txt"'), t.ctx());
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/^invalid arguments: not valid JSON/);
  });

  it('an empty argument string counts as no arguments', async () => {
    const outcome = await executeToolCall(registry, call('list_dir', ''), t.ctx());
    expect(errorOf(outcome.content)).toBe('invalid arguments: path: required (expected string)');
  });

  it('reports every problem at once', async () => {
    const outcome = await executeToolCall(registry, call('edit_file', { path: 1, new_string: 2 }), t.ctx());
    expect(errorOf(outcome.content)).toBe(
      'invalid arguments: path: expected string, got number; old_string: required (expected string); new_string: expected string, got number',
    );
  });

  it('an unknown tool lists the tools that exist', async () => {
    const outcome = await executeToolCall(registry, call('delete_everything', {}), t.ctx());
    expect(errorOf(outcome.content)).toMatch(
      /unknown tool "delete_everything" in write mode; available tools: read_file, /,
    );
  });

  it('a failure inside a tool becomes a tool error naming the argument, not a throw', async () => {
    const outcome = await executeToolCall(registry, call('read_file', { path: '../outside/x' }), t.ctx());
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toMatch(/Argument "path".*escapes the workspace/);
    expect(outcome.content).not.toMatch(/\n\s+at /);
  });

  it('a call cancelled before it starts does not run', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await executeToolCall(
      registry,
      call('write_file', { path: 'b.txt', content: 'x' }),
      t.ctx({ signal: controller.signal }),
    );
    expect(errorOf(outcome.content)).toMatch(/cancelled/);
    expect(existsSync(path.join(t.workspace, 'b.txt'))).toBe(false);
  });

  it('passes content, errors and diffs through the redactor', async () => {
    writeFileSync(path.join(t.workspace, 'key.txt'), `KEY=${TEST_SECRET}\n`);
    const read = await executeToolCall(registry, call('read_file', { path: 'key.txt' }), t.ctx());
    expect(read.content).toContain('KEY=[REDACTED]');
    expect(read.content).not.toContain(TEST_SECRET);
    const written = await executeToolCall(
      registry,
      call('write_file', { path: 'key.txt', content: `KEY=${TEST_SECRET}2\n` }),
      t.ctx(),
    );
    expect(written.diff).toContain('[REDACTED]');
    expect(written.diff).not.toContain(TEST_SECRET);
    const missing = await executeToolCall(
      registry,
      call('edit_file', { path: 'key.txt', old_string: TEST_SECRET + 'X', new_string: 'y' }),
      t.ctx(),
    );
    expect(missing.isError).toBe(true);
    expect(missing.content).not.toContain(TEST_SECRET);
  });
});

describe('tool declarations', () => {
  it('every tool declares the mode of the registry that first holds it, and a kind that fits', () => {
    const readOnly = createToolRegistry('read-only');
    const write = createToolRegistry('write');
    for (const name of write.names()) {
      const tool = write.get(name)!;
      const inReadOnly = readOnly.get(name) !== undefined;
      expect(tool.mode, name).toBe(inReadOnly ? 'read-only' : 'write');
      if (inReadOnly) expect(tool.kind, name).toBe('read');
      // #32: reading and stopping the session's own background commands exist only beside run_command, and
      // change nothing the policy gates (the command passed the gate when it started).
      else if (name === 'command_output' || name === 'stop_command') expect(tool.kind, name).toBe('read');
      else expect(['edit', 'command'], name).toContain(tool.kind);
    }
  });
});

describe('with the real redactor', () => {
  it('hides .env values and secret-looking environment values from what the model reads', async () => {
    const envValue = 'Zq8vR2kLmN4pW7xY';
    writeFileSync(path.join(t.workspace, '.env'), `DB_PASSWORD=${envValue}\n`);
    writeFileSync(
      path.join(t.workspace, 'log.txt'),
      `connecting with ${envValue} and ${'ghp_' + 'a'.repeat(36)}\n`,
    );
    const redactor = createRedactor({
      workspaceRoot: t.workspace,
      env: { MY_API_TOKEN: 'tok-9f8e7d6c5b4a' },
    });
    writeFileSync(path.join(t.workspace, 'env.txt'), 'token tok-9f8e7d6c5b4a\n');
    const registry = createToolRegistry('read-only');
    for (const file of ['.env', 'log.txt', 'env.txt']) {
      const outcome = await executeToolCall(registry, call('read_file', { path: file }), t.ctx({ redactor }));
      expect(outcome.content, file).toContain('[REDACTED');
      expect(outcome.content).not.toContain(envValue);
      expect(outcome.content).not.toContain('tok-9f8e7d6c5b4a');
      expect(outcome.content).not.toContain('ghp_aaaa');
    }
    const grep = await executeToolCall(
      registry,
      call('grep', { pattern: 'connecting' }),
      t.ctx({ redactor }),
    );
    expect(grep.content).not.toContain(envValue);
  });
});
