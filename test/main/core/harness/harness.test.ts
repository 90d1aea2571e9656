import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { generateHarness, streamHarness } from '../../../../main/core/harness/stream.js';
import { createTurnHost } from '../../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { systemPromptFor } from '../../../../main/core/harness/workspace.js';
import type { EventOf } from '../../../../main/common/events.js';
import type { LocalHarnessSession } from '../../../../main/core/harness/harness.js';
import type { HarnessSessionPort, HarnessStreamPart } from '../../../../main/core/harness/types.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { git, makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, eventsOf, filesOf, harnessFor, read, toolResultsSeen, writeFiles } from './support.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-harness-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), {
    'src/app.ts': 'export const a = 1;\n',
    'README.md': 'readme\n',
  });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the session manager', () => {
  it('creates a session once, returns the same handle, and stores extraBody and metadata in session_created', async () => {
    const harness = harnessFor(home, server, { project });
    expect(await harness.sessions.get('chat_1')).toBeUndefined();
    const [a, b] = await Promise.all([
      harness.sessions.getOrCreate({ id: 'chat_1', extraBody: { userId: 'u1' }, metadata: { app: 'test' } }),
      harness.sessions.getOrCreate({ id: 'chat_1', extraBody: { userId: 'other' } }),
    ]);
    expect(a).toBe(b);
    expect(await harness.sessions.get('chat_1')).toBe(a);
    expect(a.dataDir).toBe(path.join(fs.realpathSync(home), 'sessions', 'chat_1'));
    expect(fs.existsSync(path.join(a.dataDir as string, 'workspace', 'session', 'uploads'))).toBe(true);
    expect(fs.existsSync(path.join(a.dataDir as string, 'workflows'))).toBe(true);
    const [created] = eventsOf(home, 'chat_1');
    expect(created).toMatchObject({
      kind: 'session_created',
      extraBody: { userId: 'u1' },
      metadata: { app: 'test' },
    });
    // A fresh harness (a restart) finds it without creating another.
    const again = harnessFor(home, server, { project });
    expect((await again.sessions.get('chat_1'))?.id).toBe('chat_1');
    await again.sessions.getOrCreate({ id: 'chat_1' });
    expect(eventsOf(home, 'chat_1').filter((e) => e.kind === 'session_created')).toHaveLength(1);
  });

  it('refuses a key that cannot name a folder, with a sentence that says why', async () => {
    const harness = harnessFor(home, server, { project });
    await expect(harness.sessions.getOrCreate({ id: '../escape' })).rejects.toThrow(/cannot be a session id/);
  });

  it('decides the policy from extraBody at creation and re-checks it every turn', async () => {
    let role = 'viewer';
    const harness = harnessFor(
      home,
      server,
      { project },
      {
        policy: ({ extraBody }) =>
          (extraBody as { role: string }).role === 'admin' || role === 'admin' ? 'full-auto' : 'read-only',
      },
    );
    await harness.sessions.getOrCreate({ id: 's', extraBody: { role: 'viewer' } });
    expect(eventsOf(home, 's')[0]).toMatchObject({ policy: 'read-only', toolMode: 'read-only' });
    role = 'admin';
    server.enqueue({ kind: 'reply', text: 'hi' });
    await generateHarness({
      harness,
      session: 's',
      messages: [{ id: 'm1', role: 'user', content: 'hello' }],
    });
    expect(eventsOf(home, 's').find((e) => e.kind === 'policy_changed')).toMatchObject({
      policy: 'full-auto',
    });
  });
});

describe('files', () => {
  it('streams every kind of source to /session/, records file_staged, and the next turn reads it', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    const sources = {
      'bytes.bin': new Uint8Array([1, 2, 3]),
      'text.txt': 'plain text',
      'node.csv': Readable.from(['a,b\n', '1,2\n']),
      'web.txt': new Blob(['from a web stream']).stream(),
      'iter.txt': (async function* () {
        yield 'one ';
        await new Promise((resolve) => setTimeout(resolve, 1));
        yield Buffer.from('two');
      })(),
    };
    for (const [name, data] of Object.entries(sources)) {
      const staged = await session.files.write(`/session/uploads/${name}`, data, {
        mediaType: 'text/plain',
        source: 'test',
      });
      expect(staged.path).toBe(`/session/uploads/${name}`);
    }
    const workspace = path.join(session.dataDir as string, 'workspace');
    expect(read(path.join(workspace, 'session/uploads/node.csv'))).toBe('a,b\n1,2\n');
    expect(read(path.join(workspace, 'session/uploads/web.txt'))).toBe('from a web stream');
    expect(read(path.join(workspace, 'session/uploads/iter.txt'))).toBe('one two');
    const staged = eventsOf(home, 's').filter((e) => e.kind === 'file_staged');
    expect(staged.map((e) => e.kind === 'file_staged' && [e.path, e.size, e.source])).toContainEqual([
      '/session/uploads/node.csv',
      8,
      'test',
    ]);
    server.enqueue(callTool('read_file', { path: '/session/uploads/node.csv' }), {
      kind: 'reply',
      text: 'read it',
    });
    await generateHarness({
      harness,
      session,
      messages: [{ id: 'm1', role: 'user', content: 'read the csv' }],
    });
    expect(toolResultsSeen(server)[0]).toContain('1,2');
  });

  it('stages a message once: the same message and path again writes and records nothing', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    const first = await session.files.write('session/uploads/a.txt', 'v1', { messageId: 'msg-1' });
    const again = await session.files.write('session/uploads/a.txt', 'v2', { messageId: 'msg-1' });
    expect(first.alreadyStaged).toBe(false);
    expect(again).toMatchObject({ alreadyStaged: true, seq: first.seq, sha256: first.sha256 });
    expect(read(path.join(session.dataDir as string, 'workspace/session/uploads/a.txt'))).toBe('v1');
    expect(eventsOf(home, 's').filter((e) => e.kind === 'file_staged')).toHaveLength(1);
  });

  it('refuses paths outside the area, links planted out of it, and unknown Persistent Dirs', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    const other = await harness.sessions.getOrCreate({ id: 'other' });
    const sessionArea = path.join(session.dataDir as string, 'workspace', 'session');
    fs.symlinkSync(
      path.join(other.dataDir as string, 'workspace', 'session'),
      path.join(sessionArea, 'link'),
    );
    fs.symlinkSync(
      path.join(session.dataDir as string, 'workspace', 'persistent'),
      path.join(sessionArea, 'cross'),
    );
    await expect(session.files.write('/session/../../../other/x', 'x')).rejects.toThrow(
      /escapes|out of its area/,
    );
    await expect(session.files.write('/session/link/x.txt', 'x')).rejects.toThrow(/escapes/);
    await expect(session.files.write('/session/cross/project/x.txt', 'x')).rejects.toThrow(/out of its area/);
    await expect(session.files.write('/etc/passwd', 'x')).rejects.toThrow(/stage files under/);
    await expect(session.files.write('/persistent/nope/x', 'x')).rejects.toThrow(/no Persistent Dir "nope"/);
    expect(fs.readdirSync(path.join(other.dataDir as string, 'workspace', 'session', 'uploads'))).toEqual([]);
    expect(eventsOf(home, 's').filter((e) => e.kind === 'file_staged')).toHaveLength(0);
  });

  it('lands a /persistent/ write in the checkout only: the next turn discards it unless committed', async () => {
    const harness = harnessFor(home, server, { project });
    const session = (await harness.sessions.getOrCreate({ id: 's' })) as LocalHarnessSession;
    await session.files.write('/persistent/project/uploads/report.txt', 'report');
    const checkoutFile = path.join(
      filesOf(path.join(session.dataDir, 'workspace/persistent/project')),
      'uploads/report.txt',
    );
    expect(read(checkoutFile)).toBe('report');
    expect(fs.existsSync(path.join(project, 'uploads'))).toBe(false);
    server.enqueue({ kind: 'reply', text: 'ok' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'go' }] });
    expect(read(checkoutFile)).toBeUndefined();
    expect(fs.existsSync(path.join(project, 'uploads'))).toBe(false);
  });
});

describe('the turn lifecycle of checkouts', () => {
  it('commits a turn that a host ended without committing before the next turn resets', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    server.enqueue({ kind: 'reply', text: 'first' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
    // A host write after a committed turn is not owed a commit: the next reset discards it.
    await session.files.write('/persistent/project/host-only.txt', 'host');
    // A turn driven by createTurnHost + runTurn alone (as `keel resume` does) leaves its commit owed.
    const log = SessionLog.open(home, 's', { write: true });
    try {
      server.enqueue(callTool('write_file', { path: 'from-resume.txt', content: 'resumed\n' }), {
        kind: 'reply',
        text: 'wrote',
      });
      const host = await createTurnHost(log, { env: { PATH: process.env['PATH'] ?? '' } });
      expect((await runTurn(host, { prompt: 'write it' })).status).toBe('completed');
    } finally {
      log.close();
    }
    expect(fs.existsSync(path.join(project, 'from-resume.txt'))).toBe(false);
    server.enqueue({ kind: 'reply', text: 'next' });
    const next = await generateHarness({ harness, session, messages: [{ role: 'user', content: 'next' }] });
    expect(read(path.join(project, 'from-resume.txt'))).toBe('resumed\n');
    expect(next.commits).toMatchObject([{ dir: 'project', status: 'committed' }]);
    const kinds = next.events.map((e) => e.kind);
    expect(kinds.indexOf('persistent_commit')).toBeLessThan(kinds.indexOf('user_message'));
    // The host's write went into the same checkout before that turn, so it was committed with it.
    expect(read(path.join(project, 'host-only.txt'))).toBe('host');
  });

  it('discards a host write into an auto dir when no turn owes a commit', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    server.enqueue({ kind: 'reply', text: 'first' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'one' }] });
    await session.files.write('/persistent/project/host-only.txt', 'host');
    server.enqueue({ kind: 'reply', text: 'second' });
    const second = await generateHarness({ harness, session, messages: [{ role: 'user', content: 'two' }] });
    expect(second.commits).toEqual([]);
    expect(fs.existsSync(path.join(project, 'host-only.txt'))).toBe(false);
    expect(
      fs.existsSync(path.join(session.dataDir as string, 'workspace/persistent/project/host-only.txt')),
    ).toBe(false);
  });
});

describe('artifacts and trace', () => {
  it('lists, stats and reads artifacts as bytes and streams, and refuses handles that leave the folder', async () => {
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    server.enqueue(callTool('run_command', { command: 'seq 1 3' }), { kind: 'reply', text: 'done' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'count' }] });
    const list = await session.artifacts.list();
    const log = list.find((a) => a.handle.endsWith('run_command.log'));
    expect(log).toBeDefined();
    const handle = (log as { handle: string }).handle;
    expect((await session.artifacts.stat(handle))?.size).toBe(log?.size);
    expect((await session.artifacts.read(handle)).toString()).toContain('3');
    const chunks: Buffer[] = [];
    for await (const chunk of await session.artifacts.stream(handle)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toContain('2');
    fs.writeFileSync(path.join(dir, 'outside.txt'), 'secret');
    fs.symlinkSync(
      path.join(dir, 'outside.txt'),
      path.join(session.dataDir as string, 'artifacts', 'link.txt'),
    );
    await expect(session.artifacts.read('../events.sqlite')).rejects.toThrow(/escapes/);
    await expect(session.artifacts.read('link.txt')).rejects.toThrow(/escapes/);
    await expect(session.artifacts.stream('link.txt')).rejects.toThrow(/escapes/);
    expect(await session.artifacts.stat('../events.sqlite')).toBeUndefined();
    expect((await session.artifacts.list()).map((a) => a.handle)).not.toContain('link.txt');
    const trace = await session.trace.read();
    expect(trace.map((t) => t.stage)).toEqual(
      expect.arrayContaining(['harness_turn', 'persistent_reset', 'stream']),
    );
  });
});

describe('status', () => {
  it('reports state, turn, seq, pending approvals and usage from the log, and keeps the host patch across a restart', async () => {
    const harness = harnessFor(home, server, { project }, { policy: 'ask' });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    expect(await session.status()).toMatchObject({
      state: 'idle',
      turn: 0,
      lastSeq: 1,
      pendingApprovals: [],
    });
    server.enqueue({
      ...callTool('run_command', { command: 'true' }),
      usage: { inputTokens: 100, outputTokens: 7 },
    });
    const result = await generateHarness({ harness, session, messages: [{ role: 'user', content: 'run' }] });
    expect(result.outcome.status).toBe('awaiting_approval');
    const status = await session.status();
    expect(status).toMatchObject({
      state: 'awaiting_approval',
      turn: 1,
      usage: { inputTokens: 100, outputTokens: 7 },
    });
    expect(status.pendingApprovals).toEqual([expect.objectContaining({ tool: 'run_command' })]);
    await session.setStatus({ label: 'waiting for Ann', state: 'idle' });
    const restarted = await harnessFor(home, server, { project }).sessions.get('s');
    const after = await restarted?.status();
    // The host field survives a restart; a patched derived field (state) holds until the next event.
    expect(after).toMatchObject({ label: 'waiting for Ann', state: 'idle', lastSeq: status.lastSeq });
    // The next event outranks the patched state: the request is still unanswered.
    server.enqueue({ kind: 'reply', text: 'next' });
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'never mind' }] });
    expect(await session.status()).toMatchObject({
      label: 'waiting for Ann',
      state: 'awaiting_approval',
      turn: 2,
    });
  });
});

describe('streamHarness', () => {
  it('streams deltas and events in order and commits the project at turn end (auto)', async () => {
    const harness = harnessFor(home, server, { project });
    server.enqueue(callTool('write_file', { path: 'src/new.ts', content: 'export const b = 2;\n' }), {
      kind: 'reply',
      text: 'Wrote it.',
    });
    const stream = streamHarness({
      harness,
      session: 's',
      messages: [{ id: 'u1', role: 'user', content: 'add b' }],
    });
    const parts: HarnessStreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const result = await stream.result;
    expect(result.outcome).toEqual({ status: 'completed', text: 'Wrote it.' });
    expect(
      parts
        .filter((p) => p.type === 'text')
        .map((p) => p.type === 'text' && p.text)
        .join(''),
    ).toBe('Wrote it.');
    expect(parts.some((p) => p.type === 'tool_call')).toBe(true);
    expect(read(path.join(project, 'src/new.ts'))).toBe('export const b = 2;\n');
    const commit = result.events.find((e) => e.kind === 'persistent_commit');
    expect(commit).toMatchObject({ dir: 'project', files: [{ path: 'src/new.ts', preHash: null }] });
    expect(parts.some((p) => p.type === 'commit')).toBe(true);
    expect(result.commitManual).toBeUndefined();
    // The project repository itself only gained a working-tree file: no commit, no branch move.
    expect(git(project, 'status', '--porcelain')).toBe('?? src/new.ts\n');
    expect(git(project, 'log', '--oneline').trim().split('\n')).toHaveLength(1);
  });

  it('tells the model the workspace layout in a fixed system prompt that systemPromptFor reproduces', async () => {
    const harness = harnessFor(home, server, { project, docs: { path: project, commit: 'manual' } });
    server.enqueue({ kind: 'reply', text: 'a' }, { kind: 'reply', text: 'b' });
    await generateHarness({ harness, session: 's', messages: [{ role: 'user', content: 'one' }] });
    await generateHarness({ harness, session: 's', messages: [{ role: 'user', content: 'two' }] });
    const systems = server.requests.map(
      (r) => (r.body as { messages: { content: string }[] }).messages[0]?.content,
    );
    expect(systems[0]).toBe(systems[1]);
    expect(systems[0]).toContain('You work in a checkout of the project; your changes are applied');
    expect(systems[0]).toContain('The project is your root: every relative path is relative to it');
    expect(systems[0]).toContain('- /session/ is private to this conversation');
    expect(systems[0]).toContain('- /persistent/docs/ is a checkout of the shared folder "docs"');
    const created = eventsOf(home, 's')[0] as EventOf<'session_created'>;
    expect(systemPromptFor(path.join(fs.realpathSync(home), 'sessions', 's'), created)).toBe(systems[0]);
  });

  it('does not append a retried message twice and reports the finished turn', async () => {
    const harness = harnessFor(home, server, { project });
    server.enqueue({ kind: 'reply', text: 'first answer' });
    const messages = [{ id: 'u1', role: 'user' as const, content: 'question' }];
    await generateHarness({ harness, session: 's', messages });
    const retry = await generateHarness({ harness, session: 's', messages });
    expect(retry).toMatchObject({ alreadyStaged: true, text: 'first answer' });
    expect(eventsOf(home, 's').filter((e) => e.kind === 'user_message')).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  });

  it('runs a host-written session object with only the older five members', async () => {
    const harness = harnessFor(home, server, { project });
    const real = await harness.sessions.getOrCreate({ id: 'legacy' });
    const legacy: HarnessSessionPort = {
      id: 'legacy',
      dataDir: real.dataDir,
      files: real.files,
      artifacts: real.artifacts,
      trace: real.trace,
    };
    server.enqueue({ kind: 'reply', text: 'still works' });
    const result = await generateHarness({
      harness,
      session: legacy,
      messages: [{ id: 'x', role: 'user', content: 'hi' }],
    });
    expect(result.text).toBe('still works');
    // Without markMessageStaged nothing is marked; the log still knows the message.
    expect(fs.existsSync(path.join(real.dataDir as string, 'staged-messages'))).toBe(false);
  });

  it('keeps a manual dir uncommitted until commitManual, which records persistent_commit', async () => {
    const docs = path.join(dir, 'docs');
    writeFiles(docs, { 'guide.md': 'v1\n' });
    const harness = harnessFor(home, server, { project, docs });
    server.enqueue(callTool('write_file', { path: '/persistent/docs/guide.md', content: 'v2\n' }), {
      kind: 'reply',
      text: 'ok',
    });
    const result = await generateHarness({
      harness,
      session: 's',
      messages: [{ role: 'user', content: 'edit docs' }],
    });
    expect(read(path.join(docs, 'guide.md'))).toBe('v1\n');
    const session = (await harness.sessions.get('s')) as LocalHarnessSession;
    expect(await session.uncommitted()).toEqual([
      { dir: 'docs', commit: 'manual', readOnly: false, files: [{ path: 'guide.md', status: 'modified' }] },
    ]);
    expect(result.commitManual).toBeDefined();
    const reports = await result.commitManual?.();
    expect(reports).toMatchObject([{ dir: 'docs', status: 'committed' }]);
    expect(read(path.join(docs, 'guide.md'))).toBe('v2\n');
    expect(eventsOf(home, 's').filter((e) => e.kind === 'persistent_commit')).toHaveLength(1);
    expect(await session.uncommitted()).toEqual([]);
    // The apply is traced under the turn whose work it applies, not a turn 0.
    const applied = (await session.trace.read()).filter(
      (entry) => entry.stage === 'persistent_commit' && (entry.detail as { manual?: boolean }).manual,
    );
    expect(applied.map((entry) => entry.turn)).toEqual([1]);
  });

  it('never commits a read-only dir and asks before writing into it', async () => {
    const docs = path.join(dir, 'docs');
    writeFiles(docs, { 'guide.md': 'v1\n' });
    const harness = harnessFor(home, server, { project, docs: { path: docs, commit: 'auto' } });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    session.setReadOnlyPersistentDirs(['docs']);
    expect(session.getReadOnlyPersistentDirs()).toEqual(['docs']);
    expect(() => session.setReadOnlyPersistentDirs(['nope'])).toThrow(/no Persistent Dir "nope"/);
    server.enqueue(callTool('write_file', { path: '/persistent/docs/guide.md', content: 'v2\n' }));
    const result = await generateHarness({
      harness,
      session,
      messages: [{ role: 'user', content: 'edit docs' }],
    });
    expect(result.outcome.status).toBe('awaiting_approval');
    expect(read(path.join(docs, 'guide.md'))).toBe('v1\n');
    const request = result.events.find((e) => e.kind === 'approval_request');
    expect(request?.kind === 'approval_request' && request.reason).toMatch(
      /\/persistent\/docs\/, which is read-only/,
    );
  });

  it('reports a conflict without writing, keeping the session version as a patch artifact', async () => {
    const harness = harnessFor(home, server, { project });
    server.enqueue(callTool('write_file', { path: 'README.md', content: 'from the session\n' }), {
      kind: 'reply',
      text: 'ok',
    });
    const session = await harness.sessions.getOrCreate({ id: 's' });
    // The user edits the same file while the turn runs (after the tool call, before the turn ends).
    const stream = streamHarness({ harness, session, messages: [{ role: 'user', content: 'edit readme' }] });
    for await (const part of stream) {
      if (part.type === 'event' && part.event.kind === 'tool_result')
        fs.writeFileSync(path.join(project, 'README.md'), 'from the user\n');
    }
    const result = await stream.result;
    const report = result.commits[0];
    expect(report).toMatchObject({ dir: 'project', status: 'conflict', conflicts: ['README.md'] });
    expect(read(path.join(project, 'README.md'))).toBe('from the user\n');
    if (report?.status !== 'conflict') return;
    expect((await session.artifacts.read(report.patchArtifact)).toString()).toContain('+from the session');
  });
});

describe('hosts of the API (the app, the CLI)', () => {
  it("creates each session with its own setup: model, project checkout or folder, policy; the harness's options otherwise", async () => {
    const other = makeRepo(path.join(dir, 'other'), { 'b.txt': 'b\n' });
    const harness = harnessFor(home, server, { project });
    const own = await harness.sessions.getOrCreate({
      id: 'own',
      title: 'Own setup',
      create: {
        model: {
          provider: 'openai-compatible',
          model: 'other-model',
          baseUrl: server.openaiBaseUrl,
          contextWindow: 8_000,
        },
        persistentDirs: { project: { path: other, commit: 'manual' } },
        policy: 'ask',
        networkAllow: ['registry.npmjs.org'],
      },
    });
    expect(eventsOf(home, 'own')[0]).toMatchObject({
      model: 'other-model',
      contextWindow: 8_000,
      policy: 'ask',
      projectFolder: fs.realpathSync(other),
      networkAllow: ['registry.npmjs.org'],
      title: 'Own setup',
    });
    expect((own as LocalHarnessSession).persistentDirs()).toEqual([
      { name: 'project', path: other, commit: 'manual' },
    ]);
    // A direct session works in the folder itself: no persistent.json, tools write into the folder.
    const direct = (await harness.sessions.getOrCreate({
      id: 'direct',
      create: { projectFolder: other, persistentDirs: {} },
    })) as LocalHarnessSession;
    expect(direct.persistentDirs()).toEqual([]);
    expect(eventsOf(home, 'direct')[0]).toMatchObject({
      projectFolder: fs.realpathSync(other),
      model: 'scripted-model',
    });
    server.enqueue(callTool('write_file', { path: 'c.txt', content: 'c\n' }), { kind: 'reply', text: 'ok' });
    await generateHarness({ harness, session: 'direct', messages: [{ role: 'user', content: 'write c' }] });
    expect(read(path.join(other, 'c.txt'))).toBe('c\n');
    // The setup applies only when creating: an existing session keeps its own.
    await harness.sessions.getOrCreate({ id: 'own', create: { policy: 'full-auto' } });
    expect(eventsOf(home, 'own').filter((e) => e.kind === 'session_created')).toHaveLength(1);
    await expect(
      harness.sessions.getOrCreate({ id: 'both', create: { projectFolder: other } }),
    ).rejects.toThrow(/directly or on a checkout/);
  });

  it('hands every part to onPart as it happens, starting with started once the session is held, and reads keys per turn', async () => {
    let key = 'first-key';
    const harness = harnessFor(home, server, { project }, { keys: () => ({ openaiCompatible: key }) });
    server.enqueue({ kind: 'reply', text: 'one' }, { kind: 'reply', text: 'two' });
    const seen: HarnessStreamPart[] = [];
    const stream = streamHarness({
      harness,
      session: 's',
      messages: [{ role: 'user', content: 'hi' }],
      onPart: (part) => seen.push(part),
    });
    const result = await stream.result;
    expect(result.outcome.status).toBe('completed');
    expect(seen[0]).toEqual({ type: 'started', turn: 1, resumed: false });
    const iterated: HarnessStreamPart[] = [];
    for await (const part of stream) iterated.push(part);
    expect(iterated).toEqual(seen);
    expect(seen.filter((p) => p.type === 'event').map((p) => p.type === 'event' && p.event.kind)).toEqual(
      result.events.map((e) => e.kind),
    );
    expect(server.requests.at(-1)?.headers['authorization']).toBe('Bearer first-key');
    key = 'second-key';
    await generateHarness({ harness, session: 's', messages: [{ role: 'user', content: 'again' }] });
    expect(server.requests.at(-1)?.headers['authorization']).toBe('Bearer second-key');
  });

  it('continues an unfinished turn without a new message and says so in its started part', async () => {
    const harness = harnessFor(home, server, { project });
    server.enqueue({ kind: 'fail', status: 400, message: 'bad request' });
    const failed = await generateHarness({
      harness,
      session: 's',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(failed.outcome.status).toBe('failed');
    server.enqueue({ kind: 'reply', text: 'recovered' });
    const parts: HarnessStreamPart[] = [];
    const result = await streamHarness({ harness, session: 's', messages: [], onPart: (p) => parts.push(p) })
      .result;
    expect(parts[0]).toEqual({ type: 'started', turn: 1, resumed: true });
    expect(result.outcome).toEqual({ status: 'completed', text: 'recovered' });
    expect(eventsOf(home, 's').filter((e) => e.kind === 'user_message')).toHaveLength(1);
  });
});
