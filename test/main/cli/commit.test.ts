import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import type { ProviderServer, ScriptStep } from '../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  startSessionFixture,
} from '../../support/sessionFixture.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  ({ dir, home, project, server } = await startSessionFixture('keel-commit-'));
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src', 'main.go'), 'package main\n');
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
});

const run = (prompt: string, extra: string[]) =>
  newSessionArgs({ project, server }, { policy: 'full-auto', prompt, extra });

const write = (file: string, content: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'write_file', arguments: { path: file, content } }],
});

const commitsOf = (id: string) => eventsOf(home, id).filter((e) => e.kind === 'persistent_commit');

describe('keel run --commit', () => {
  it('auto: the model works on persistent/project/ and the folder gets the changes when the turn ends', async () => {
    server.enqueue(write('persistent/project/src/new.go', 'package main // new\n'), {
      kind: 'reply',
      text: 'done',
    });
    const result = await keel(home, run('add a file', ['--commit', 'auto']));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/committed 1 file to project/);
    expect(fs.readFileSync(path.join(project, 'src', 'new.go'), 'utf8')).toBe('package main // new\n');
    const system = (server.requests[0]?.body as { messages: { role: string; content: string }[] })
      .messages[0];
    expect(system?.content).toContain('persistent/project/');
    expect(commitsOf(onlySessionId(home))).toHaveLength(1);
  });

  it('manual: nothing reaches the folder until keel commit; a new turn is refused while changes wait', async () => {
    server.enqueue(write('persistent/project/notes.md', 'draft\n'), { kind: 'reply', text: 'drafted' });
    expect((await keel(home, run('draft notes', ['--commit', 'manual']))).code).toBe(0);
    const id = onlySessionId(home);
    expect(fs.existsSync(path.join(project, 'notes.md'))).toBe(false);
    const refused = await keel(home, ['run', '--session', id, 'more']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/uncommitted changes in project \(1 file\).*keel commit .*keel discard/);
    const committed = await keel(home, ['commit', id]);
    expect(committed.code).toBe(0);
    expect(committed.stderr).toMatch(/committed 1 file to project/);
    expect(fs.readFileSync(path.join(project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect(commitsOf(id)).toHaveLength(1);
    server.enqueue(write('persistent/project/notes.md', 'second draft\n'), { kind: 'reply', text: 'again' });
    expect((await keel(home, ['run', '--session', id, 'redo'])).code).toBe(0);
    const discarded = await keel(home, ['discard', id]);
    expect(discarded.stderr).toMatch(/discarded the uncommitted changes of project/);
    expect(fs.readFileSync(path.join(project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect((await keel(home, ['commit', id])).stderr).toMatch(/nothing to commit in project/);
  });

  it('refuses a bad mode before creating anything, and commit on a session without checkouts', async () => {
    const bad = await keel(home, run('x', ['--commit', 'sometimes']));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--commit must be auto or manual/);
    expect(fs.existsSync(path.join(home, 'sessions'))).toBe(false);
    server.enqueue({ kind: 'reply', text: 'direct' });
    expect((await keel(home, run('plain', []))).code).toBe(0);
    const direct = await keel(home, ['commit', onlySessionId(home)]);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toMatch(/works on its project folder directly/);
  });

  it('auto: an edit approved with keel approve --resume reaches the folder when that turn ends', async () => {
    server.enqueue(write('persistent/project/src/approved.go', 'package main // approved\n'));
    const args = run('add a file', ['--commit', 'auto']);
    args[args.indexOf('full-auto')] = 'ask';
    expect((await keel(home, args)).code).toBe(3);
    const id = onlySessionId(home);
    expect(fs.existsSync(path.join(project, 'src', 'approved.go'))).toBe(false);
    server.enqueue({ kind: 'reply', text: 'done' });
    const approved = await keel(home, ['approve', id, '--scope', 'once', '--resume']);
    expect(approved.code).toBe(0);
    expect(fs.readFileSync(path.join(project, 'src', 'approved.go'), 'utf8')).toBe(
      'package main // approved\n',
    );
    expect(commitsOf(id).length).toBeGreaterThan(0);
  });
});
