import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { ProviderServer } from '../support/providerServer.js';
import { makeRepo, makeTemp } from '../main/core/persistent/support.js';
import { CORE_ENTRY, ensureCoreBuilt, HOST_SCRIPT, runHost } from './build.js';

let dir: string;
let server: ProviderServer;
let config: Record<string, unknown>;

beforeAll(async () => {
  await ensureCoreBuilt();
}, 180_000);

beforeEach(async () => {
  dir = makeTemp('keel-host-');
  server = await new ProviderServer().start();
  const notes = path.join(dir, 'notes');
  fs.mkdirSync(notes);
  const csv = path.join(dir, 'sales.csv');
  fs.writeFileSync(csv, 'region,total\nnorth,120\nsouth,80\n');
  config = {
    home: path.join(dir, 'home'),
    baseUrl: server.openaiBaseUrl,
    project: makeRepo(path.join(dir, 'project'), { 'README.md': 'shop\n' }),
    notes,
    csv,
    sessionId: 'chat_123',
  };
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a plain Node host on keel/core', () => {
  it('imports nothing but the package entry', () => {
    const imports = [...fs.readFileSync(HOST_SCRIPT, 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map(
      (m) => m[1],
    );
    expect(imports.filter((name) => !name?.startsWith('node:'))).toEqual(['keel/core']);
    expect(fs.existsSync(CORE_ENTRY)).toBe(true);
    expect(fs.existsSync(CORE_ENTRY.replace(/\.js$/, '.d.ts'))).toBe(true);
  });

  it('gives two processes racing getOrCreate on one key the same single session', async () => {
    const startAt = Date.now() + 700;
    const runs = await Promise.all([
      runHost('race', { ...config, startAt }),
      runHost('race', { ...config, startAt }),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    expect(runs.map((run) => run.lines[0]?.['id'])).toEqual(['chat_123', 'chat_123']);
    const log = SessionLog.open(config['home'] as string, 'chat_123');
    try {
      expect(log.read().filter((e) => e.kind === 'session_created')).toHaveLength(1);
    } finally {
      log.close();
    }
    expect(
      fs.existsSync(path.join(config['home'] as string, 'sessions', 'chat_123', 'persistent.json')),
    ).toBe(true);
  });

  it('stages a CSV between messages, streams a turn that reads it, commits manually, and resumes after a restart', async () => {
    server.enqueue(
      { kind: 'reply', text: 'Great, send it over.' },
      {
        kind: 'reply',
        text: 'Reading the file. ',
        toolCalls: [{ name: 'read_file', arguments: { path: '/session/uploads/sales.csv' } }],
      },
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: '/persistent/notes/summary.md', content: 'north leads: 120\n' },
          },
        ],
      },
      { kind: 'reply', text: 'Done.' },
    );
    const first = await runHost('first', config);
    expect(first.code, first.stderr).toBe(0);
    const step = (run: typeof first, name: string) => run.lines.find((line) => line['step'] === name) ?? {};
    expect(step(first, 'hello')['text']).toBe('Great, send it over.');
    expect(step(first, 'staged')['staged']).toMatchObject({ path: '/session/uploads/sales.csv', size: 32 });
    expect(step(first, 'summarize')).toMatchObject({
      text: 'Reading the file. Done.',
      outcome: 'completed',
      hasCommitManual: 'function',
    });
    expect(step(first, 'summarize')['kinds']).toEqual(
      expect.arrayContaining(['user_message', 'tool_result']),
    );
    expect(step(first, 'uncommitted')['dirs']).toEqual([
      { dir: 'notes', commit: 'manual', readOnly: false, files: [{ path: 'summary.md', status: 'added' }] },
    ]);
    expect(step(first, 'commitManual')['reports']).toMatchObject([{ dir: 'notes', status: 'committed' }]);
    expect(fs.readFileSync(path.join(config['notes'] as string, 'summary.md'), 'utf8')).toBe(
      'north leads: 120\n',
    );
    // The model saw the staged CSV's content.
    const body = server.requests[2]?.body as { messages: { role: string; content: string }[] };
    expect(body.messages.find((m) => m.role === 'tool')?.content).toContain('north,120');

    server.enqueue({ kind: 'reply', text: 'I wrote summary.md.' });
    const second = await runHost('second', config);
    expect(second.code, second.stderr).toBe(0);
    expect(step(second, 'status')['status']).toMatchObject({ state: 'idle', turn: 2, label: 'summarized' });
    expect(step(second, 'trace')['stages']).toEqual(
      expect.arrayContaining(['harness_turn', 'persistent_commit']),
    );
    expect((step(second, 'artifacts')['handles'] as string[]).some((h) => h.startsWith('commits/'))).toBe(
      true,
    );
    expect(step(second, 'answer')).toEqual({
      step: 'answer',
      text: 'I wrote summary.md.',
      alreadyStaged: false,
    });
    expect(step(second, 'retry')).toEqual({
      step: 'retry',
      text: 'I wrote summary.md.',
      alreadyStaged: true,
    });
    // The resumed request carried the whole conversation, the CSV's tool result included.
    const resumed = server.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
    expect(resumed.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user', // [file staged: /session/uploads/sales.csv ...]
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
      'user', // the environment block, last in every request
    ]);
    expect(resumed.messages.at(-1)?.content.startsWith('<environment>\n')).toBe(true);
    expect(server.requests).toHaveLength(5);
  });
});
