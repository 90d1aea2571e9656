import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { watchBackingFolders } from '../../main/core/persistent/backingWatch.js';
import { lastEndPhotoChanged } from '../../main/core/persistent/directHeld.js';
import { lastStartPhotoChanged } from '../../main/core/persistent/directTurn.js';
import { generateHarness } from '../../main/core/harness/stream.js';
import { ProviderServer } from '../support/providerServer.js';
import { makeRepo, makeTemp } from '../main/core/persistent/support.js';
import { callTool, eventsOf, harnessFor, read } from '../main/core/harness/support.js';

// Issue #36: in a host that watches the project, a --commit direct turn's end tree is staged from the watcher's
// events. A command that wants a change left out of the turn's recorded change (its patch, its revert) writes a file
// through a second name, whose folder is the only one with an event: a hard link made in an earlier turn. Inside the
// box a link can only join two names of the project (its own mount: link(2) across mounts fails), and a changed file
// with a second name makes the end tree the full pass; both are checked here.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeEach(async () => {
  dir = makeTemp('keel-direct-hidden-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), {
    'src/app.ts': 'export const a = 1;\n',
    'app/.vscode/tasks.json': '{"tasks": []}\n',
  });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  watchBackingFolders(false);
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One turn of session `id` running `command` in the box; the command's output. */
async function commandTurn(id: string, command: string): Promise<string> {
  const harness = harnessFor(home, server, {}, { watchProjects: true });
  await harness.sessions.getOrCreate({ id, create: { projectFolder: project, persistentDirs: {} } });
  server.enqueue(callTool('run_command', { command }), { kind: 'reply', text: 'done' });
  const result = await generateHarness({ harness, session: id, messages: [{ role: 'user', content: 'go' }] });
  expect(result.outcome.status).toBe('completed');
  return (
    eventsOf(home, id).findLast((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')?.content ?? ''
  );
}

const lastChange = (id: string) =>
  eventsOf(home, id)
    .filter((e): e is EventOf<'persistent_commit'> => e.kind === 'persistent_commit')
    .at(-1)?.files;

describe.skipIf(process.platform !== 'linux')('a change hidden behind a second name', () => {
  it("cannot link a project file from the session's own writable area", async () => {
    fs.mkdirSync(home, { recursive: true });
    const area = path.join(fs.realpathSync(home), 'sessions', 'outside', 'workspace', 'session');
    const output = await commandTurn('outside', `ln src/app.ts ${area}/x; echo "rc=$?"`);
    expect(output).toMatch(/rc=1/);
    expect(output).toMatch(/Invalid cross-device link/);
    expect(fs.existsSync(path.join(area, 'x'))).toBe(false);
  });

  it("is in the turn's change when written through a link inside the project made a turn before", async () => {
    await commandTurn('twin', 'ln src/app.ts src/twin.ts');
    await commandTurn('twin', "printf 'export const a = 9;\\n' > src/twin.ts");
    expect(read(path.join(project, 'src/app.ts'))).toBe('export const a = 9;\n');
    expect(lastChange('twin')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'src/app.ts', postHash: sha256('export const a = 9;\n') }),
        expect.objectContaining({ path: 'src/twin.ts', postHash: sha256('export const a = 9;\n') }),
      ]),
    );
  });
});

/** The protected files the session's last held-back request names. */
const heldPaths = (id: string) => {
  const request = eventsOf(home, id).findLast(
    (e): e is EventOf<'approval_request'> => e.kind === 'approval_request',
  );
  const files = (JSON.parse(request?.arguments ?? '{}') as { files?: { path: string }[] }).files ?? [];
  return files.map((file) => file.path).sort();
};

describe.skipIf(process.platform !== 'linux')("a protected file the turn's command changed", () => {
  it('is put back and asked for, its end photograph taken from the changed paths', async () => {
    await commandTurn(
      'protected',
      'echo evil > app/.vscode/tasks.json; mkdir -p .husky; echo evil > .husky/pre-commit; echo ok > src/ok.ts',
    );
    expect(lastEndPhotoChanged).toBe(true);
    expect(read(path.join(project, 'app/.vscode/tasks.json'))).toBe('{"tasks": []}\n');
    expect(fs.existsSync(path.join(project, '.husky/pre-commit'))).toBe(false);
    expect(read(path.join(project, 'src/ok.ts'))).toBe('ok\n');
    expect(heldPaths('protected')).toEqual(['.husky/pre-commit', 'app/.vscode/tasks.json']);
  });

  it('is put back when written through a second name made a turn before (the whole walk)', async () => {
    await commandTurn('linked', 'ln app/.vscode/tasks.json src/t.json');
    await commandTurn('linked', 'echo evil > src/t.json');
    expect(lastEndPhotoChanged).toBe(false);
    expect(read(path.join(project, 'app/.vscode/tasks.json'))).toBe('{"tasks": []}\n');
    expect(heldPaths('linked')).toEqual(['app/.vscode/tasks.json']);
  });

  it("is put back to the user's edit made between turns (the start photograph brought up to date)", async () => {
    await commandTurn('between', 'echo ok > src/ok.ts');
    fs.writeFileSync(path.join(project, 'app/.vscode/tasks.json'), '{"tasks": ["the user\'s"]}\n');
    await commandTurn('between', 'echo evil > app/.vscode/tasks.json');
    expect(lastStartPhotoChanged).toBe(true);
    expect(read(path.join(project, 'app/.vscode/tasks.json'))).toBe('{"tasks": ["the user\'s"]}\n');
    expect(heldPaths('between')).toEqual(['app/.vscode/tasks.json']);
  });

  it("is put back to the user's edit made through a second name outside the project (no event there)", async () => {
    // The user keeps the file as a hard link into a dotfiles folder and edits it there between turns.
    const dotfile = path.join(dir, 'dotfiles-tasks.json');
    fs.linkSync(path.join(project, 'app/.vscode/tasks.json'), dotfile);
    await commandTurn('dotfile', 'echo ok > src/ok.ts');
    fs.writeFileSync(dotfile, '{"tasks": ["from dotfiles"]}\n');
    await commandTurn('dotfile', 'echo evil > app/.vscode/tasks.json');
    expect(lastStartPhotoChanged).toBe(true);
    expect(read(path.join(project, 'app/.vscode/tasks.json'))).toBe('{"tasks": ["from dotfiles"]}\n');
  });

  it('takes the whole walk when the kept photograph does not read as one', async () => {
    await commandTurn('kept', 'echo ok > src/ok.ts');
    const kept = path.join(fs.realpathSync(home), 'sessions', 'kept', 'protected-last.json');
    const { mark } = JSON.parse(fs.readFileSync(kept, 'utf8')) as { mark: unknown };
    // Its watch mark is the live watcher's: only the entries are wrong.
    fs.writeFileSync(kept, JSON.stringify({ complete: true, entries: 'not entries', mark }));
    await commandTurn('kept', 'echo evil > app/.vscode/tasks.json');
    expect(lastStartPhotoChanged).toBe(false);
    expect(read(path.join(project, 'app/.vscode/tasks.json'))).toBe('{"tasks": []}\n');
    expect(heldPaths('kept')).toEqual(['app/.vscode/tasks.json']);
  });
});
