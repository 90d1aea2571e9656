import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixture, type IpcFixture } from './support.js';

let f: IpcFixture;

beforeEach(async () => {
  f = await startFixture('keel-ipc-changes-');
  fs.mkdirSync(path.join(f.project, 'src'));
  fs.writeFileSync(path.join(f.project, 'src', 'main.go'), 'package main\n\nfunc main() {}\n');
  fs.writeFileSync(path.join(f.project, 'old.txt'), 'to be removed\n');
});

afterEach(async () => {
  await f.close();
});

const step = (...calls: { name: string; arguments: Record<string, unknown> }[]) => ({
  kind: 'reply' as const,
  toolCalls: calls,
});
const edit = (file: string, oldString: string, newString: string) => ({
  name: 'edit_file',
  arguments: { path: file, old_string: oldString, new_string: newString },
});
const write = (file: string, content: string) => ({ name: 'write_file', arguments: { path: file, content } });
const remove = (file: string) => ({ name: 'run_command', arguments: { command: `rm ${file}` } });

async function turn(sessionId: string, prompt: string, extra: Record<string, unknown> = {}) {
  const { turnId } = await f.call('turns.send', { sessionId, prompt, ...extra });
  return (await f.turnEnded(sessionId, turnId)).outcome;
}

describe('Changes of a manual checkout', () => {
  it('gives each uncommitted file both texts, warns before a new turn, and discards on request', async () => {
    const session = await f.newSession({ policy: 'full-auto', checkout: 'manual' });
    f.server.enqueue(
      step(
        edit('src/main.go', 'func main() {}', 'func main() { println("hi") }'),
        write('notes.md', 'draft\n'),
      ),
      { kind: 'reply', text: 'done' },
    );
    expect(await turn(session.id, 'say hi')).toEqual({ status: 'completed' });

    const review = await f.call('persistent.diff', { sessionId: session.id });
    expect(review.dirs[0]?.files).toEqual([
      { path: 'notes.md', change: 'added' },
      { path: 'src/main.go', change: 'modified' },
    ]);
    expect(review.newTurnWarning).toMatch(/^Uncommitted changes in project \(2 files\) would be lost/);
    expect(
      await f.call('persistent.file', { sessionId: session.id, dir: 'project', path: 'src/main.go' }),
    ).toEqual({
      dir: 'project',
      path: 'src/main.go',
      change: 'modified',
      original: 'package main\n\nfunc main() {}\n',
      modified: 'package main\n\nfunc main() { println("hi") }\n',
      binary: false,
      tooLarge: false,
    });
    expect(
      await f.call('persistent.file', { sessionId: session.id, dir: 'project', path: 'notes.md' }),
    ).toMatchObject({ change: 'added', original: null, modified: 'draft\n' });
    expect(
      (await f.fail('persistent.file', { sessionId: session.id, dir: 'project', path: 'old.txt' })).code,
    ).toBe('not_found');
    expect((await f.fail('persistent.file', { sessionId: session.id, dir: 'nope', path: 'x' })).code).toBe(
      'not_found',
    );

    // Without discardChanges the turn is refused; with it the changes go and the turn runs.
    expect((await f.fail('turns.send', { sessionId: session.id, prompt: 'again' })).code).toBe(
      'invalid_state',
    );
    f.server.enqueue({ kind: 'reply', text: 'fresh start' });
    expect(await turn(session.id, 'again', { discardChanges: true })).toEqual({ status: 'completed' });
    expect((await f.call('persistent.diff', { sessionId: session.id })).dirs).toEqual([]);
    expect(fs.existsSync(path.join(f.project, 'notes.md'))).toBe(false);
    expect(fs.readFileSync(path.join(f.project, 'src', 'main.go'), 'utf8')).toBe(
      'package main\n\nfunc main() {}\n',
    );
  });

  it('after apply, shows what each turn committed, rebuilds before/after texts, and falls back to the patch once the file moved on', async () => {
    const session = await f.newSession({ policy: 'full-auto', checkout: 'manual' });
    f.server.enqueue(
      step(
        edit('src/main.go', 'func main() {}', 'func main() { run() }'),
        write('notes.md', 'draft\n'),
        remove('old.txt'), // commands run in the project's checkout
      ),
      { kind: 'reply', text: 'done' },
    );
    await turn(session.id, 'refactor main');
    const { reports } = await f.call('persistent.apply', { sessionId: session.id });
    expect(reports[0]?.status).toBe('committed');

    const { turns } = await f.call('persistent.history', { sessionId: session.id });
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ turn: 1, prompt: 'refactor main' });
    const commit = turns[0]?.commits[0];
    if (!commit) throw new Error('no commit');
    expect(commit.dir).toBe('project');
    expect([...commit.files].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: 'notes.md', change: 'added' },
      { path: 'old.txt', change: 'deleted' },
      { path: 'src/main.go', change: 'modified' },
    ]);

    const at = (file: string) =>
      f.call('persistent.file', { sessionId: session.id, dir: 'project', path: file, commitSeq: commit.seq });
    expect(await at('src/main.go')).toEqual({
      dir: 'project',
      path: 'src/main.go',
      change: 'modified',
      original: 'package main\n\nfunc main() {}\n',
      modified: 'package main\n\nfunc main() { run() }\n',
      binary: false,
      tooLarge: false,
    });
    expect(await at('old.txt')).toMatchObject({
      change: 'deleted',
      original: 'to be removed\n',
      modified: null,
    });
    expect(await at('notes.md')).toMatchObject({ change: 'added', original: null, modified: 'draft\n' });

    fs.writeFileSync(path.join(f.project, 'src', 'main.go'), 'package main // edited by hand\n');
    const moved = await at('src/main.go');
    expect(moved).toMatchObject({ original: null, modified: null });
    expect(moved.note).toMatch(/changed in the project folder since this commit/);
    expect(moved.patch).toContain('+func main() { run() }');
    expect(
      (await f.fail('persistent.file', { sessionId: session.id, dir: 'project', path: 'x', commitSeq: 2 }))
        .code,
    ).toBe('not_found');
  });
});

describe('Changes of an auto checkout', () => {
  it('groups the commits made at the end of each turn by turn', async () => {
    const session = await f.newSession({ policy: 'full-auto', checkout: 'auto' });
    f.server.enqueue(step(write('a.txt', 'a\n')), { kind: 'reply', text: 'one' });
    await turn(session.id, 'first');
    f.server.enqueue({ kind: 'reply', text: 'nothing to do' });
    await turn(session.id, 'second');
    f.server.enqueue(step(write('b.txt', 'b\n')), { kind: 'reply', text: 'three' });
    await turn(session.id, 'third');
    const { turns } = await f.call('persistent.history', { sessionId: session.id });
    expect(
      turns.map((t) => [t.turn, t.prompt, t.commits.map((c) => c.files.map((file) => file.path))]),
    ).toEqual([
      [1, 'first', [['a.txt']]],
      [3, 'third', [['b.txt']]],
    ]);
    expect(await f.call('persistent.diff', { sessionId: session.id })).toEqual({
      hasCheckouts: true,
      dirs: [],
      newTurnWarning: null,
    });
  });
});
