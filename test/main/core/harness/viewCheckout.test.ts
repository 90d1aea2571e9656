// Issue #36: a session whose checkout is a copy-on-write view (settings.json `checkouts.kind: 'view'`), end to end
// through the harness with the real kernel overlay, the real bwrap box and the loopback provider.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { sessionWorkspace } from '../../../../main/core/harness/workspace.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { watchBackingFolders, watchedReady } from '../../../../main/core/persistent/backingWatch.js';
import { lastSnapshotWay } from '../../../../main/core/persistent/snapshot.js';
import { lastViewStatusWay } from '../../../../main/core/persistent/viewStatus.js';
import { mountViews } from '../../../../main/core/persistent/turnCheckouts.js';
import { stopAllViews } from '../../../../main/core/persistent/viewHolder.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { ignoreForcedKind, makeRepo } from '../persistent/support.js';
import { viewHome } from './viewFixture.js';
import { callTool, harnessFor, read, toolResultsSeen } from './support.js';

ignoreForcedKind();
let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let skip: string | undefined;

beforeAll(async () => {
  ({ dir, home, project, server, skip } = await viewHome('keel-view-', {
    'src/app.ts': 'export const a = 1;\n',
    'README.md': 'readme\n',
  }));
});

afterAll(async () => {
  await server.close();
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a session on a copy-on-write view', () => {
  it('works in the view (file tools and boxed commands), commits back, and copies nothing of the project', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 'a' });
    server.enqueue(
      callTool('write_file', { path: 'src/tool.ts', content: 'written by a tool\n' }),
      callTool('run_command', {
        command: 'echo boxed > boxed.txt && cat src/tool.ts && rm README.md && git status --short',
      }),
      { kind: 'reply', text: 'done' },
    );
    const result = await generateHarness({ harness, session, messages: [{ role: 'user', content: 'go' }] });
    // The box saw the tool's write (the same merged view), and the view's own git shows exactly the session's work.
    expect(toolResultsSeen(server)[1]).toMatch(
      /written by a tool\n[\s\S]*D README\.md[\s\S]*\?\? boxed\.txt/,
    );
    expect(result.commits).toMatchObject([{ dir: 'project', status: 'committed' }]);
    expect(read(path.join(project, 'src/tool.ts'))).toBe('written by a tool\n');
    expect(read(path.join(project, 'boxed.txt'))).toBe('boxed\n');
    expect(fs.existsSync(path.join(project, 'README.md'))).toBe(false);
    const dataDir = session.dataDir as string;
    const state = JSON.parse(fs.readFileSync(path.join(dataDir, 'checkouts/project/state.json'), 'utf8')) as {
      kind: string;
    };
    expect(state.kind).toBe('view');
    // A one-turn host (this harness does not watch its projects) started watching the view's project as the turn began,
    // so its later environment blocks can read the view's status from its layers (viewStatus.ts).
    expect(await watchedReady(fs.realpathSync(project))).toBe(true);
    // On the host the checkout is only the mount point (git's `.git` file): no project file was copied.
    expect(fs.readdirSync(path.join(dataDir, 'workspace/persistent/project'))).toEqual(['.git']);
    const trace = await session.trace.read();
    expect(trace.find((record) => record.stage === 'checkout')?.detail).toMatchObject({
      dir: 'project',
      kind: 'view',
    });
  });

  it("sends a new session's first request before the view's snapshot, and takes it before the first tool that can change files", async (context) => {
    if (skip !== undefined) context.skip();
    const stateFile = () => path.join(dataDir, 'checkouts/project/state.json');
    const seen: { pending: boolean; privateIndex: boolean }[] = [];
    let dataDir = '';
    // At each request: was the view's baseline taken yet (state.json), and does its private snapshot index exist?
    const scripted = await new ProviderServer({
      respond: () => {
        const state = JSON.parse(fs.readFileSync(stateFile(), 'utf8')) as { pendingBaseline?: boolean };
        seen.push({
          pending: state.pendingBaseline === true,
          privateIndex: fs.existsSync(path.join(dataDir, 'checkouts/project/backing.index')),
        });
        if (seen.length === 1) return callTool('read_file', { path: 'src/app.ts' });
        if (seen.length === 2) {
          // The user edits the project while the turn runs, before any tool could change a file: the view shows the
          // folder itself, and the baseline taken at the first command holds the edit, so it is not the session's.
          fs.writeFileSync(path.join(project, 'src/app.ts'), 'edited before the command\n');
          return callTool('run_command', { command: 'git status --short; cat src/app.ts' });
        }
        return { kind: 'reply', text: 'done' };
      },
    }).start();
    try {
      const harness = harnessFor(home, scripted, { project });
      const session = await harness.sessions.getOrCreate({ id: 'p' });
      dataDir = session.dataDir as string;
      const result = await generateHarness({ harness, session, messages: [{ role: 'user', content: 'go' }] });
      expect(seen).toEqual([
        { pending: true, privateIndex: false },
        { pending: true, privateIndex: false },
        { pending: false, privateIndex: true },
      ]);
      const results = toolResultsSeen(scripted);
      expect(results[0]).toContain('export const a = 1;');
      // The view's git agrees with its files at once: no change listed, the user's edit shown as the file's content.
      expect(results[1]).toMatch(/^[^?MAD]*edited before the command\n/);
      expect(result.commits.filter((report) => report.status === 'committed')).toEqual([]);
      expect(read(path.join(project, 'src/app.ts'))).toBe('edited before the command\n');
      // The first request said the view's git status without running one (known clean while pending).
      expect(JSON.stringify(scripted.requests[0]?.body)).toContain('git status: clean');
    } finally {
      await scripted.close();
      fs.writeFileSync(path.join(project, 'src/app.ts'), 'export const a = 1;\n');
    }
  });

  it('keeps sessions apart: a write staged in one view is not in another, nor in the project', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const a = await harness.sessions.getOrCreate({ id: 'b' });
    server.enqueue({ kind: 'reply', text: 'first' });
    await generateHarness({ harness, session: a, messages: [{ role: 'user', content: 'one' }] });
    await a.files.write('/persistent/project/staged-in-b.txt', 'b only');
    const other = await harness.sessions.getOrCreate({ id: 'c' });
    server.enqueue(callTool('run_command', { command: 'ls; cat staged-in-b.txt' }), {
      kind: 'reply',
      text: 'done',
    });
    await generateHarness({ harness, session: other, messages: [{ role: 'user', content: 'look' }] });
    expect(toolResultsSeen(server)[0]).toMatch(/No such file/);
    expect(fs.existsSync(path.join(project, 'staged-in-b.txt'))).toBe(false);
    // The next turn of the session that staged it resets its view: a host write no turn owes is discarded.
    server.enqueue(callTool('run_command', { command: 'cat staged-in-b.txt' }), {
      kind: 'reply',
      text: 'done',
    });
    await generateHarness({ harness, session: a, messages: [{ role: 'user', content: 'two' }] });
    expect(toolResultsSeen(server)[0]).toMatch(/No such file/);
  });

  it('keeps its git indexes between turns, drops them when the session ends for its host, and the next turn rebuilds them: its git and commit see only its own work', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 'd' });
    server.enqueue(callTool('write_file', { path: 'src/d1.ts', content: 'one\n' }), {
      kind: 'reply',
      text: 'done',
    });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
    const dataDir = session.dataDir as string;
    const stateDir = path.join(dataDir, 'checkouts/project');
    const state = JSON.parse(fs.readFileSync(path.join(stateDir, 'state.json'), 'utf8')) as {
      gitDir: string;
    };
    const indexes = () => [
      fs.existsSync(path.join(stateDir, 'backing.index')),
      fs.existsSync(path.join(state.gitDir, 'index')),
    ];
    // Kept between turns: the next reset's snapshot starts from the private index (its stat data, its known tree). The
    // view's own index went with the commit, which built the session's tree without it (viewTree.ts): the next reset
    // installs a new one.
    expect(indexes()).toEqual([true, false]);
    expect(read(path.join(project, 'src/d1.ts'))).toBe('one\n');
    // The user edits the project between turns; the next turn's box git shows only the turn's own work.
    fs.writeFileSync(path.join(project, 'README.md'), 'readme, by the user\n');
    const statusTurn = async (file: string) => {
      server.enqueue(
        callTool('run_command', { command: `echo new > ${file} && git status --short && cat README.md` }),
        { kind: 'reply', text: 'done' },
      );
      const result = await generateHarness({ harness, session, messages: [{ role: 'user', content: file }] });
      const seen = toolResultsSeen(server).at(-1) ?? '';
      expect(seen).toMatch(new RegExp(`\\?\\? ${file.replace('.', '\\.')}\nreadme, by the user\n`));
      // Neither the user's edit nor the last turn's committed file counts as the session's work.
      expect(seen).not.toMatch(/^ ?[MAD] /m);
      // Its first request's status was known without a git over the view (a view is known clean after its reset).
      expect(JSON.stringify(server.requests.at(-2)?.body)).toContain('git status: clean');
      expect(result.commits).toMatchObject([{ dir: 'project', status: 'committed' }]);
      expect(read(path.join(project, file))).toBe('new\n');
    };
    await statusTurn('src/d2.ts');
    expect(indexes()[0]).toBe(true);
    // The session ends for its host (`keel run` ends so): its views are let go, their indexes dropped first.
    await harness.endSessions({ reason: 'other', sessionId: 'd' });
    expect(indexes()).toEqual([false, false]);
    // The next turn rebuilds them from the repository's index: the same answers.
    await statusTurn('src/d3.ts');
    expect(read(path.join(project, 'README.md'))).toBe('readme, by the user\n');
  });

  it("in a long-lived host (watchProjects) a turn's reset stages only what changed, and the box sees it all", async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project }, { watchProjects: true });
    try {
      const session = await harness.sessions.getOrCreate({ id: 'w' });
      server.enqueue(callTool('write_file', { path: 'src/w1.ts', content: 'w1\n' }), {
        kind: 'reply',
        text: 'done',
      });
      await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
      expect(read(path.join(project, 'src/w1.ts'))).toBe('w1\n');
      // The request after the write said the view's status without a git over its files (viewStatus.ts): the watcher
      // vouched that the backing folder is what the baseline took, so only the view's upper layer could differ.
      expect(JSON.stringify(server.requests.at(-1)?.body)).toContain('git status --short:\\n  ?? src/w1.ts');
      expect(lastViewStatusWay).toEqual({ known: true });
      // The user edits the project between turns: the next reset's snapshot stages that, and the last commit's file.
      fs.writeFileSync(path.join(project, 'README.md'), 'readme, by the user, watched\n');
      server.enqueue(
        callTool('run_command', { command: 'echo w2 > src/w2.ts && git status --short && cat README.md' }),
        { kind: 'reply', text: 'done' },
      );
      const result = await generateHarness({
        harness,
        session,
        messages: [{ role: 'user', content: 'two' }],
      });
      expect(lastSnapshotWay).toMatchObject({ watched: true });
      expect(toolResultsSeen(server).at(-1) ?? '').toMatch(
        /\?\? src\/w2\.ts\nreadme, by the user, watched\n/,
      );
      expect(result.commits).toMatchObject([{ dir: 'project', status: 'committed' }]);
      expect(read(path.join(project, 'src/w2.ts'))).toBe('w2\n');
      expect(read(path.join(project, 'README.md'))).toBe('readme, by the user, watched\n');
    } finally {
      await harness.endSessions({ reason: 'other', sessionId: 'w' });
      watchBackingFolders(false);
    }
  });

  it("in a one-turn host's continued session, the reset no watch saw is checked once the first tool may change files", async (context) => {
    if (skip !== undefined) context.skip();
    let stateFile = '';
    let asked = 0;
    const scripted = await new ProviderServer({
      respond: () => {
        asked += 1;
        if (asked === 1) return callTool('write_file', { path: 'src/k1.ts', content: 'k1\n' });
        if (asked === 3) {
          // `keel run --session`'s reset comes before the watch it starts has walked the project: no mark vouches for
          // that snapshot. Made so here (which way this process's reset went depends on the walk's speed) by dropping
          // the mark its reset left.
          const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { watch?: unknown };
          delete state.watch;
          fs.writeFileSync(stateFile, JSON.stringify(state));
          return callTool('write_file', { path: 'src/k2.ts', content: 'k2\n' });
        }
        return { kind: 'reply', text: 'done' };
      },
    }).start();
    try {
      const harness = harnessFor(home, scripted, { project });
      const session = await harness.sessions.getOrCreate({ id: 'k' });
      stateFile = path.join(session.dataDir as string, 'checkouts/project/state.json');
      await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
      await generateHarness({ harness, session, messages: [{ role: 'user', content: 'two' }] });
      // The request after the write read the view's status from its layers: the snapshot taken as the tool began found
      // the baseline's tree, and the watcher vouched from then (Checkout.confirmWatch).
      expect(asked).toBe(4);
      expect(JSON.stringify(scripted.requests.at(-1)?.body)).toContain(
        'git status --short:\\n  ?? src/k2.ts',
      );
      expect(lastViewStatusWay).toEqual({ known: true });
      expect(read(path.join(project, 'src/k2.ts'))).toBe('k2\n');
    } finally {
      await scripted.close();
    }
  });

  it("names a view's folder as its tools reach it among the checkouts known clean as a turn starts", async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 'e' });
    server.enqueue({ kind: 'reply', text: 'done' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
    const log = SessionLog.open(home, 'e');
    try {
      await mountViews(log.dir);
      const created = log.read({ fromSeq: 1, limit: 1 })[0];
      if (created?.kind !== 'session_created') throw new Error('no session_created event');
      const layout = sessionWorkspace(log, created, undefined);
      expect(layout.workspace).toMatch(/^\/proc\/\d+\/root\//);
      expect(layout.knownClean).toEqual([path.resolve(layout.workspace, layout.commandCwd)]);
    } finally {
      log.close();
    }
  });

  it('keeps the build output across the next reset, and the file tools follow a link to the checkout by its absolute path', async (context) => {
    if (skip !== undefined) context.skip();
    const built = makeRepo(path.join(dir, 'built'), {
      'src/app.ts': 'export const b = 1;\n',
      '.gitignore': 'dist/\n',
    });
    const harness = harnessFor(home, server, { project: built });
    const session = await harness.sessions.getOrCreate({ id: 'f' });
    server.enqueue(
      // The build writes ignored output and a link to the sources as the box names them (its absolute path).
      callTool('run_command', {
        command:
          'mkdir -p dist && echo built > dist/app.js && ln -s "$PWD/src" dist/src && cat dist/src/app.ts',
      }),
      callTool('read_file', { path: 'dist/src/app.ts' }),
      callTool('glob', { pattern: 'dist/src/*.ts' }),
      callTool('edit_file', { path: 'dist/src/app.ts', old_string: 'b = 1', new_string: 'b = 2' }),
      { kind: 'reply', text: 'built' },
    );
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'build' }] });
    const seen = toolResultsSeen(server);
    expect(seen[0]).toMatch(/^export const b = 1;\n\[exit code 0/);
    expect(seen[1]).toBe('     1\texport const b = 1;');
    expect(seen[2]).toBe('dist/src/app.ts');
    expect(seen[3]).not.toMatch(/error/i);
    // The edit through the link is the source file's: committed to the project; the ignored output is not.
    expect(read(path.join(built, 'src/app.ts'))).toBe('export const b = 2;\n');
    expect(fs.existsSync(path.join(built, 'dist'))).toBe(false);
    server.enqueue(callTool('run_command', { command: 'cat dist/app.js && readlink dist/src' }), {
      kind: 'reply',
      text: 'still there',
    });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'again' }] });
    const dataDir = session.dataDir as string;
    // The second turn's request carries the first's four results, then this one.
    expect(toolResultsSeen(server)[4]).toMatch(
      new RegExp(`^built\\n${path.join(dataDir, 'workspace/persistent/project/src')}\\n\\[exit code 0`),
    );
  });
});
