import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { gitProcessCount } from '../../../../main/core/persistent/git.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { ProviderServer, type ScriptStep } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, eventsOf, harnessFor, read } from './support.js';

// A --commit direct session photographs its folder just before the first tool that can change it, not when the
// turn starts (main/core/persistent/directTurn.ts): a turn that changes nothing runs no git, and what the user
// edits before that tool is never recorded (nor reverted) as the turn's.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let onRequest: (count: number) => ScriptStep;
let requests = 0;

beforeEach(async () => {
  dir = makeTemp('keel-direct-window-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export const a = 1;\n' });
  requests = 0;
  onRequest = () => ({ kind: 'reply', text: 'ok' });
  server = await new ProviderServer({ respond: () => onRequest(++requests) }).start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const commitsOf = (id: string) =>
  eventsOf(home, id).filter((e): e is EventOf<'persistent_commit'> => e.kind === 'persistent_commit');

async function directSession(id: string) {
  const harness = harnessFor(home, server, {});
  await harness.sessions.getOrCreate({ id, create: { projectFolder: project, persistentDirs: {} } });
  return harness;
}

describe('a --commit direct turn photographs its folder only when a tool may change it', () => {
  it('a text-only turn runs no git and leaves no start behind', async () => {
    // A plain folder: the environment block's `git status` runs only in a repository.
    fs.rmSync(path.join(project, '.git'), { recursive: true, force: true });
    const harness = await directSession('text');
    for (const content of ['hello', 'again']) {
      const before = gitProcessCount();
      const result = await generateHarness({
        harness,
        session: 'text',
        messages: [{ role: 'user', content }],
      });
      expect(result.outcome.status).toBe('completed');
      expect(gitProcessCount() - before).toBe(0);
    }
    const dataDir = path.join(fs.realpathSync(home), 'sessions', 'text');
    expect(fs.existsSync(path.join(dataDir, 'protected-snapshot.json'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'history', 'direct', 'turn-start.json'))).toBe(false);
    expect(commitsOf('text')).toEqual([]);
  });

  it("the user's edit made while the model thinks, before the turn's first write, is not the turn's change", async () => {
    const harness = await directSession('edit');
    onRequest = (count) => {
      if (count > 1) return { kind: 'reply', text: 'done' };
      // The user saves a file while the first request is answered: before any tool of the turn ran.
      fs.writeFileSync(path.join(project, 'notes.txt'), 'the user wrote this\n');
      return callTool('write_file', { path: 'src/b.ts', content: 'export const b = 2;\n' });
    };
    const result = await generateHarness({
      harness,
      session: 'edit',
      messages: [{ role: 'user', content: 'b' }],
    });
    expect(result.outcome.status).toBe('completed');
    expect(read(path.join(project, 'src/b.ts'))).toBe('export const b = 2;\n');
    const commits = commitsOf('edit');
    expect(commits).toHaveLength(1);
    expect(commits[0]?.files.map((file) => file.path)).toEqual(['src/b.ts']);
    // The next turn's start records nothing more: the user's file stays the user's.
    onRequest = () => ({ kind: 'reply', text: 'fine' });
    await generateHarness({ harness, session: 'edit', messages: [{ role: 'user', content: 'ok?' }] });
    expect(commitsOf('edit')).toHaveLength(1);
    expect(read(path.join(project, 'notes.txt'))).toBe('the user wrote this\n');
  });

  it('a protected file a turn writes after a text-only turn is still put back and asked for', async () => {
    const harness = await directSession('held');
    await generateHarness({ harness, session: 'held', messages: [{ role: 'user', content: 'hi' }] });
    onRequest = (count) =>
      count > 2
        ? { kind: 'reply', text: 'done' }
        : callTool('run_command', { command: 'mkdir -p .vscode && echo evil > .vscode/tasks.json' });
    await generateHarness({ harness, session: 'held', messages: [{ role: 'user', content: 'vscode' }] });
    expect(fs.existsSync(path.join(project, '.vscode', 'tasks.json'))).toBe(false);
    const held = eventsOf(home, 'held').filter(
      (e): e is EventOf<'approval_request'> => e.kind === 'approval_request' && e.tool === 'commit_protected',
    );
    expect(held).toHaveLength(1);
    expect(held[0]?.reason).toContain('.vscode/tasks.json');
  });
});
