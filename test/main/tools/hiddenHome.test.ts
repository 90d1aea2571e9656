import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { executeToolCall, runParsed } from '../../../main/tools/execute.js';
import { grepToOutcome } from '../../../main/tools/grep.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolContext, ToolModule, ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from './helpers.js';

// The Keel home inside the project (ToolContext.boxHidden): not there for any tool, except the session's own
// /session area, which lies inside it and is reached by its prefix.

const registry = createToolRegistry('write');
const run = (name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name, arguments: JSON.stringify(args) }, ctx);

let temp: TempWorkspace;
let keelHome: string;
let ctx: ToolContext;

beforeEach(() => {
  temp = makeWorkspace();
  keelHome = path.join(temp.workspace, '.config', 'Keel');
  const otherCheckout = path.join(keelHome, 'sessions', 'other', 'workspace', 'persistent', 'project');
  const ownArea = path.join(keelHome, 'sessions', 'me', 'workspace', 'session');
  mkdirSync(otherCheckout, { recursive: true });
  mkdirSync(ownArea, { recursive: true });
  writeFileSync(path.join(otherCheckout, 'secret.txt'), 'needle in another session\n');
  writeFileSync(path.join(ownArea, 'own.txt'), 'needle in my own area\n');
  writeFileSync(path.join(temp.workspace, 'app.txt'), 'needle in the project\n');
  symlinkSync(keelHome, path.join(temp.workspace, 'k'));
  ctx = temp.ctx({ boxHidden: [keelHome], areas: [{ prefix: '/session', root: ownArea }] });
});

afterEach(() => temp.cleanup());

describe('the Keel home inside the project', () => {
  it('list_dir and glob leave it out without a word', async () => {
    const listed = await run('list_dir', { path: '.', depth: 5 }, ctx);
    expect(listed.isError).toBe(false);
    expect(listed.content).toContain('.config/');
    expect(listed.content).not.toContain('Keel');
    const all = await run('glob', { pattern: '**/*' }, ctx);
    expect(all.content.split('\n').sort()).toEqual(['app.txt']);
    for (const pattern of ['**/secret.txt', '.config/**', 'k/**', '.config/Keel/**', `${keelHome}/**`]) {
      const found = await run('glob', { pattern }, ctx);
      expect(found.content, pattern).toBe(`No files match "${pattern}".`);
    }
    expect((await run('glob', { pattern: '/session/*' }, ctx)).content).toBe('/session/own.txt');
  });

  it.each(['ripgrep', 'builtin'] as const)(
    'grep (%s) finds the project and its own area, never the home',
    async (engine) => {
      const search = (args: { pattern: string; path?: string; glob?: string }) =>
        grepToOutcome(args, ctx, { engine }).catch((error: Error) => ({
          content: error.message,
          isError: true,
        }));
      expect((await search({ pattern: 'needle' })).content).toBe('app.txt:1: needle in the project');
      // A glob naming the home does not bring it back (ripgrep: the last matching glob wins).
      expect((await search({ pattern: 'needle', glob: '**/Keel/**' })).content).toBe('No matches.');
      expect((await search({ pattern: 'needle', path: '/session' })).content).toBe(
        '/session/own.txt:1: needle in my own area',
      );
      for (const target of ['k', '.config/Keel', '.config/Keel/sessions/other']) {
        const refused = await search({ pattern: 'needle', path: target });
        expect(refused.isError, target).toBe(true);
        expect(refused.content, target).toMatch(/Keel's own data folder/);
      }
    },
  );

  it.each(['ripgrep', 'builtin'] as const)(
    'grep (%s) still works when the home has glob characters in its name',
    async (engine) => {
      const odd = path.join(temp.workspace, 'data', 'Ke[e]l{1,2}*!?');
      mkdirSync(odd, { recursive: true });
      writeFileSync(path.join(odd, 'x.txt'), 'needle in an odd home\n');
      const oddCtx = { ...ctx, boxHidden: [keelHome, odd] };
      expect((await grepToOutcome({ pattern: 'needle' }, oddCtx, { engine })).content).toBe(
        'app.txt:1: needle in the project',
      );
    },
  );

  it('read_file and writes refuse it; a missing file is not matched to a name inside it', async () => {
    const own = await run('read_file', { path: '/session/own.txt' }, ctx);
    expect(own.content).toContain('needle in my own area');
    for (const [name, args] of [
      ['read_file', { path: '.config/Keel/sessions/other/workspace/persistent/project/secret.txt' }],
      ['read_file', { path: 'k/sessions/other/workspace/persistent/project/secret.txt' }],
      ['write_file', { path: '.config/Keel/mcp-approvals.jsonl', content: 'x\n' }],
      ['write_file', { path: 'k/settings.json', content: '{}\n' }],
      ['run_command', { command: 'true', cwd: 'k' }],
    ] as const) {
      const outcome = await run(name, args, ctx);
      expect(outcome.isError, name).toBe(true);
      expect(errorOf(outcome.content), name).toMatch(/Keel's own data folder/);
    }
    expect(existsSync(path.join(keelHome, 'mcp-approvals.jsonl'))).toBe(false);
    expect(existsSync(path.join(keelHome, 'settings.json'))).toBe(false);
    const missing = await run('read_file', { path: 'secret.txt' }, ctx);
    expect(errorOf(missing.content)).toBe('path: "secret.txt" does not exist');
  });
});

describe('an error from below the tools', () => {
  it("reaches the model without the session's data folder or the Keel home", async () => {
    const sessionDir = path.join(keelHome, 'sessions', 'me');
    const own = temp.ctx({ ...ctx, sessionDir });
    const thrower: ToolModule = {
      name: 'thrower',
      description: 'throws what a runner or the box would',
      parameters: z.strictObject({}),
      mode: 'read-only',
      kind: 'read',
      execute: () =>
        Promise.reject(
          new Error(
            `The working directory ${sessionDir}/artifacts is outside the workspace ${sessionDir}/workspace; ` +
              `see ${keelHome}/settings.json and ${sessionDir}/workspace/session/own.txt`,
          ),
        ),
      preview: () => Promise.resolve({ ok: true, subject: {}, protectedReason: null }),
      resume: { rule: 'rerun' },
    };
    const outcome = await runParsed({ tool: thrower, args: {} }, own);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).not.toContain(temp.root);
    expect(outcome.content).not.toContain('sessions/me');
    expect(errorOf(outcome.content)).toBe(
      "The working directory <the session's data folder>/artifacts is outside the workspace " +
        "<the session's data folder>/workspace; see <Keel's data folder>/settings.json and /session/own.txt",
    );
  });
});
