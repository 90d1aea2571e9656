import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import type { Push } from '../../../main/ipc/hub.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { ProviderServer, type RecordedRequest, type ScriptStep } from '../../support/providerServer.js';
import { conversationOf, isSummaryRequest, replyWithUsage, summaryFor } from '../core/compaction/scripted.js';
import { ipcCalls } from './support.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let handlers: Handlers;
let pushes: Push[];

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-ipc-more-'));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src', 'main.go'), 'package main\n');
  pushes = [];
});

afterEach(async () => {
  await handlers.close();
  await server.close();
  removeTempDir(dir);
});

async function start(respond?: (request: RecordedRequest) => ScriptStep) {
  server = await new ProviderServer(respond ? { respond } : {}).start();
  handlers = createHandlers({ home, mode: 'serve', version: '1', env });
  handlers.hub.subscribe((push) => pushes.push(push));
}

const { call, fail } = ipcCalls(() => handlers);

function turnEnded(sessionId: string, turnId: string) {
  return new Promise<void>((resolve) => {
    const check = () =>
      pushes.some(
        (p) =>
          p.topic === 'session.status' &&
          p.payload.turnId === turnId &&
          p.payload.sessionId === sessionId &&
          !p.payload.running,
      );
    if (check()) return resolve();
    const off = handlers.hub.subscribe(() => {
      if (check()) {
        off();
        resolve();
      }
    });
  });
}

async function turn(sessionId: string, prompt: string) {
  const { turnId } = await call('turns.send', { sessionId, prompt });
  await turnEnded(sessionId, turnId);
}

const write = (file: string, content: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'write_file', arguments: { path: file, content } }],
});

describe('Persistent Dir checkouts from the UI', () => {
  it('manual: changes wait for review, block a new turn, and reach the folder only when applied', async () => {
    await start();
    const { session } = await call('sessions.create', {
      projectFolder: project,
      provider: 'openai-compatible',
      baseUrl: server.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 32_000,
      policy: 'full-auto',
      checkout: 'manual',
    });
    expect((await call('sessions.open', { sessionId: session.id })).persistentDirs).toEqual([
      { dir: 'project', commit: 'manual', readOnly: false },
    ]);
    server.enqueue(write('notes.md', 'draft\n'), { kind: 'reply', text: 'drafted' });
    await turn(session.id, 'draft notes');
    expect(fs.existsSync(path.join(project, 'notes.md'))).toBe(false);

    const review = await call('persistent.diff', { sessionId: session.id });
    expect(review.hasCheckouts).toBe(true);
    expect(review.dirs).toEqual([
      {
        dir: 'project',
        commit: 'manual',
        readOnly: false,
        onNewTurn: 'refuse',
        files: [{ path: 'notes.md', change: 'added' }],
        diff: expect.stringContaining('+draft') as string,
      },
    ]);
    expect(review.newTurnWarning).toMatch(/project \(1 file\).*discardChanges/);
    // The UI asks for the review and the files at once: git must not trip over its own index lock.
    const together = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? call('persistent.diff', { sessionId: session.id })
          : call('persistent.file', { sessionId: session.id, dir: 'project', path: 'notes.md' }),
      ),
    );
    expect(together.map((r) => ('dirs' in r ? r.dirs.length : r.path))).toEqual(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 1 : 'notes.md')),
    );
    const refused = await fail('turns.send', { sessionId: session.id, prompt: 'more' });
    expect(refused.code).toBe('invalid_state');
    expect(refused.message).toMatch(/changes in project \(1 file\).*apply or discard/);

    const applied = await call('persistent.apply', { sessionId: session.id });
    expect(applied.reports).toEqual([
      {
        dir: 'project',
        status: 'committed',
        files: [{ path: 'notes.md', merged: false }],
        diffArtifact: expect.any(String) as string,
      },
    ]);
    expect(fs.readFileSync(path.join(project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect(
      pushes.some((p) => p.topic === 'event.appended' && p.payload.event.kind === 'persistent_commit'),
    ).toBe(true);
    expect((await call('persistent.diff', { sessionId: session.id })).dirs).toEqual([]);

    server.enqueue(write('notes.md', 'second draft\n'), { kind: 'reply', text: 'again' });
    await turn(session.id, 'redo');
    expect(await call('persistent.discard', { sessionId: session.id })).toEqual({ discarded: ['project'] });
    expect(fs.readFileSync(path.join(project, 'notes.md'), 'utf8')).toBe('draft\n');
    expect(await call('persistent.apply', { sessionId: session.id })).toEqual({
      reports: [{ dir: 'project', status: 'unchanged' }],
    });
  });

  it('by default: an auto checkout of the project; a file the turn writes is in the folder when the turn ends', async () => {
    await start();
    // No checkout field: what the New session dialog sends by default and what an older client sends.
    const { session } = await call('sessions.create', {
      projectFolder: project,
      provider: 'openai-compatible',
      baseUrl: server.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 32_000,
      policy: 'full-auto',
    });
    expect((await call('sessions.open', { sessionId: session.id })).persistentDirs).toEqual([
      { dir: 'project', commit: 'auto', readOnly: false },
    ]);
    server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'from the turn\n' } }],
      },
      { kind: 'reply', text: 'wrote x' },
    );
    // While the turn runs, its write is in the session's checkout only (pushes are published synchronously).
    const seenAtToolResult: { inFolder: boolean; inCheckout: boolean }[] = [];
    const checkout = path.join(home, 'sessions', session.id, 'workspace', 'persistent', 'project', 'x.txt');
    const off = handlers.hub.subscribe((p) => {
      if (p.topic === 'event.appended' && p.payload.event.kind === 'tool_result') {
        seenAtToolResult.push({
          inFolder: fs.existsSync(path.join(project, 'x.txt')),
          inCheckout: fs.existsSync(checkout),
        });
      }
    });
    await turn(session.id, 'write x.txt');
    off();
    expect(seenAtToolResult).toEqual([{ inFolder: false, inCheckout: true }]);
    expect(fs.readFileSync(path.join(project, 'x.txt'), 'utf8')).toBe('from the turn\n');
    // Nothing is written at the workspace root's level of the project folder, nor under persistent/.
    expect(fs.existsSync(path.join(project, 'persistent'))).toBe(false);
    const commits = pushes.flatMap((p) =>
      p.topic === 'event.appended' && p.payload.event.kind === 'persistent_commit' ? [p.payload.event] : [],
    );
    expect(commits).toEqual([
      expect.objectContaining({ dir: 'project', files: [expect.objectContaining({ path: 'x.txt' })] }),
    ]);
    expect(await call('persistent.diff', { sessionId: session.id })).toEqual({
      hasCheckouts: true,
      dirs: [],
      newTurnWarning: null,
    });
  });

  it('auto: the folder gets the changes when the turn ends; a session without checkouts has nothing to review', async () => {
    await start();
    const base = {
      projectFolder: project,
      provider: 'openai-compatible',
      baseUrl: server.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 32_000,
      policy: 'full-auto',
    };
    const { session } = await call('sessions.create', { ...base, checkout: 'auto' });
    server.enqueue(write('src/new.go', 'package main // new\n'), {
      kind: 'reply',
      text: 'done',
    });
    await turn(session.id, 'add a file');
    expect(fs.readFileSync(path.join(project, 'src', 'new.go'), 'utf8')).toBe('package main // new\n');

    const plain = (await call('sessions.create', { ...base, checkout: 'direct' })).session;
    expect((await call('sessions.open', { sessionId: plain.id })).persistentDirs).toEqual([]);
    expect(await call('persistent.diff', { sessionId: plain.id })).toEqual({
      hasCheckouts: false,
      dirs: [],
      newTurnWarning: null,
    });
    expect((await fail('persistent.apply', { sessionId: plain.id })).code).toBe('invalid_state');
  });
});

describe('the Changes view reading while a turn commits', () => {
  // A review read (persistent.diff stages the checkout's index without the lease) used to take
  // checkout.index.lock while finishTurn's auto commit needed it, failing about 2 turns in 3: the checkout now
  // runs one index-writing operation at a time per process.
  it("a turn's auto commit is not failed by review reads made while it commits", async () => {
    await start();
    fs.mkdirSync(path.join(project, 'lib'));
    for (let i = 0; i < 200; i++)
      fs.writeFileSync(path.join(project, 'lib', `f${i}.ts`), `export const x = ${i};\n`);
    const { session } = await call('sessions.create', {
      projectFolder: project,
      provider: 'openai-compatible',
      baseUrl: server.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 32_000,
      policy: 'full-auto',
    });
    for (let round = 0; round < 16; round++) {
      server.enqueue(write(`r${round}.txt`, 'x\n'), { kind: 'reply', text: 'done' });
      const reads: Promise<unknown>[] = [];
      // What the Changes view does when a tool result or the answer arrives.
      const off = handlers.hub.subscribe((p) => {
        const kind = p.topic === 'event.appended' ? p.payload.event.kind : undefined;
        if (kind === 'tool_result' || kind === 'assistant_message') {
          for (let i = 0; i < 4; i++)
            reads.push(handlers.invoke('persistent.diff', { sessionId: session.id }));
        }
      });
      const { turnId } = await call('turns.send', { sessionId: session.id, prompt: `round ${round}` });
      await turnEnded(session.id, turnId);
      off();
      await Promise.all(reads);
      const status = pushes.findLast(
        (p) => p.topic === 'session.status' && p.payload.turnId === turnId && !p.payload.running,
      );
      expect(status?.topic === 'session.status' && status.payload.outcome, `round ${round}`).toEqual({
        status: 'completed',
      });
      expect(fs.existsSync(path.join(project, `r${round}.txt`)), `round ${round}`).toBe(true);
    }
  }, 60_000);
});

describe('compactions from the UI', () => {
  it('compacts on demand, lists and inspects it, re-runs it (both kept), and is busy-exclusive with turns', async () => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({ compaction: { threshold: 0.75, keepRecent: 0.05 } }),
    );
    // Long enough that four reads outweigh the fixed part of a request (system prompt, tools, environment).
    const lines = Array.from({ length: 90 }, (_, n) => `billing line ${n + 1}: charge(account, amount)`);
    fs.writeFileSync(path.join(project, 'src', 'billing.txt'), `${lines.join('\n')}\n`);
    await start((request) => {
      if (isSummaryRequest(request)) return { kind: 'reply', text: summaryFor(request) };
      const messages = conversationOf(request);
      if (messages[messages.length - 1]?.role === 'user') {
        return replyWithUsage(request, {
          toolCalls: [{ name: 'read_file', arguments: { path: 'src/billing.txt' } }],
        });
      }
      return replyWithUsage(request, { text: 'Every line charges an account.' });
    });
    const { session } = await call('sessions.create', {
      projectFolder: project,
      provider: 'openai-compatible',
      baseUrl: server.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 16000,
      policy: 'read-only',
    });
    for (let n = 1; n <= 4; n++)
      await turn(session.id, `OBJECTIVE ${n}: read src/billing.txt and summarize it.`);
    expect((await call('compactions.list', { sessionId: session.id })).compactions).toEqual([]);

    const first = await call('compactions.run', { sessionId: session.id });
    if (first.status !== 'compacted') throw new Error(`skipped: ${first.reason}`);
    expect(first.compaction).toMatchObject({ kind: 'compaction', fromSeq: 2 });
    // Four real reads of the 90-line file: the summary more than halves the request.
    expect(first.compaction.tokensAfter).toBeLessThan((first.compaction.tokensBefore ?? 0) / 2);
    expect(pushes).toContainEqual({
      topic: 'event.appended',
      payload: { sessionId: session.id, event: first.compaction },
    });

    const rerun = await call('compactions.run', { sessionId: session.id, rerun: first.compaction.seq });
    if (rerun.status !== 'compacted') throw new Error('the re-run was skipped');
    expect(rerun.compaction.supersedes).toBe(first.compaction.seq);
    const { compactions } = await call('compactions.list', { sessionId: session.id });
    expect(compactions.map((c) => [c.seq, c.status, c.supersededBy ?? null])).toEqual([
      [first.compaction.seq, 'superseded', rerun.compaction.seq],
      [rerun.compaction.seq, 'in_effect', null],
    ]);
    const inspected = await call('compactions.inspect', { sessionId: session.id, seq: rerun.compaction.seq });
    expect(inspected.replacedCount).toBe(rerun.compaction.through - 2 + 1);
    expect(inspected.summary.status).toBe('in_effect');
    expect((await fail('compactions.run', { sessionId: session.id, rerun: 2 })).code).toBe('not_found');

    // While a turn runs, compaction is refused (one writer per session).
    const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'one more' });
    expect((await fail('compactions.run', { sessionId: session.id })).code).toBe('busy');
    await turnEnded(session.id, turnId);
  });
});
