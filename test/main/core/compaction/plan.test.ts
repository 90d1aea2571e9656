import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { compactNow } from '../../../../main/core/harness/compaction.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { PLAN_HANDLE_HEADING } from '../../../../main/core/projection/index.js';
import { createTurnHost } from '../../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { createProvider } from '../../../../main/providers/index.js';
import type { ScriptStep } from '../../../support/providerServer.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';
import { conversationOf, isSummaryRequest } from './scripted.js';

const steps: ScriptStep[] = [];

const fixture = useTurnHostFixture('keel-plan-', {
  server: {
    respond: (request) =>
      isSummaryRequest(request)
        ? { kind: 'reply', text: '## Objective\nRate limiting.\n## Work done\nRead the server.' }
        : (steps.shift() ?? { kind: 'reply', text: 'ok' }),
  },
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    const lines = Array.from(
      { length: 300 },
      (_, i) => `app.get('/route${i}', handler${i}); // no limit yet`,
    );
    fs.writeFileSync(path.join(project, 'src', 'server.js'), `${lines.join('\n')}\n`);
  },
  cleanup: () => {
    steps.splice(0);
  },
});

const PLAN = [
  { content: 'Read the server', status: 'completed', activeForm: 'Reading the server' },
  { content: 'Add a rate limiter', status: 'in_progress', activeForm: 'Adding a rate limiter' },
  { content: 'Test the limit', status: 'pending' },
];

describe('the plan across a compaction', () => {
  it('is recorded with the compaction and re-stated in the next request, after the todo calls were summarized away', async () => {
    const log = SessionLog.create(fixture.home, {
      projectFolder: fixture.project,
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: fixture.server.openaiBaseUrl,
      contextWindow: 32_000,
      toolMode: 'write',
      policy: 'ask',
    });
    fixture.track(log);
    const host = {
      ...(await createTurnHost(log, { env: {}, compaction: { threshold: 0 } })),
      retry: { baseDelayMs: 1 },
    };
    steps.push(
      {
        kind: 'reply',
        toolCalls: [
          { id: 't1', name: 'todo', arguments: { todos: PLAN } },
          { id: 'r1', name: 'read_file', arguments: { path: 'src/server.js' } },
        ],
      },
      { kind: 'reply', text: 'The routes have no limiter yet; adding one next.' },
      { kind: 'reply', text: 'Still on the limiter.' },
    );
    expect((await runTurn(host, { prompt: 'add rate limiting to every route' })).status).toBe('completed');
    expect((await runTurn(host, { prompt: 'how is it going?' })).status).toBe('completed');

    const compacted = await compactNow(log, {
      settings: { keepRecent: 0.01 },
      provider: (pin) => createProvider(pin, {}, {}),
    });
    expect(compacted.status).toBe('compacted');
    const event = (compacted as { event: EventOf<'compaction'> }).event;
    const todoResult = log.read().find((e) => e.kind === 'tool_result' && e.tool === 'todo');
    expect(event.through).toBeGreaterThan(todoResult?.seq ?? Infinity);
    expect(event.plan).toEqual(PLAN);

    steps.push({ kind: 'reply', text: 'Next: the test.' });
    const before = fixture.server.requests.length;
    expect((await runTurn(host, { prompt: 'continue' })).status).toBe('completed');
    const next = fixture.server.requests.slice(before).find((request) => !isSummaryRequest(request));
    if (!next) throw new Error('no request after the compaction');
    const messages = conversationOf(next);
    // The todo call itself is gone (summarized); the plan is a handle right after the summary.
    expect(next.raw).not.toContain('"t1"');
    const summaryIndex = messages.findIndex(
      (m) => m.role === 'system' && m.content?.startsWith('Session so far: '),
    );
    expect(messages[summaryIndex + 1]).toEqual({
      role: 'system',
      content: `${PLAN_HANDLE_HEADING}\n- [x] Read the server\n- [>] Add a rate limiter (in progress)\n- [ ] Test the limit`,
    });
    expect(next.rejected).toBeUndefined();
  });
});
