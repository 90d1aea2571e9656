import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../../../main/core/log/sessionId.js';
import { SessionLog, SessionNotFoundError } from '../../../../main/core/log/sessionLog.js';
import { readTraceSummary } from '../../../../main/core/trace/index.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from '../log/support.js';

const tempHome = useTempHomes('keel-trace-');

describe('readTraceSummary', () => {
  it('reads a session and its child sessions from the home, nesting the child under its turn', () => {
    const home = tempHome();
    const childId = newSessionId();
    const missingId = newSessionId();
    const parent = SessionLog.create(home, sessionInit({ model: 'claude-sonnet-4-5' }));
    parent.append([
      { kind: 'user_message', content: 'split the work' },
      {
        kind: 'assistant_message',
        content: '',
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: 10 },
        model: 'claude-sonnet-4-5',
      },
      { kind: 'subagent_started', childId, task: 'read everything', tools: ['read_file'] },
      { kind: 'subagent_result', childId, content: 'read it all' },
      { kind: 'subagent_started', childId: missingId, task: 'vanished', tools: [] },
    ]);
    parent.appendTrace({ turn: 1, stage: 'projection', startedAt: new Date().toISOString(), durationMs: 3 });
    const parentId = parent.id;
    parent.close();
    const child = SessionLog.create(home, sessionInit({ model: 'claude-sonnet-4-5', parentId }), {
      id: childId,
    });
    child.append([
      { kind: 'user_message', content: 'read everything' },
      {
        kind: 'assistant_message',
        content: 'read it all',
        toolCalls: [],
        usage: { inputTokens: 40, outputTokens: 4 },
        model: 'claude-sonnet-4-5',
      },
    ]);
    child.close();

    const summary = readTraceSummary(home, parentId);
    expect(summary.sessionId).toBe(parentId);
    expect(summary.turns).toHaveLength(1);
    expect(summary.turns[0]?.stages.map((s) => s.name)).toEqual(['projection']);
    const [found, missing] = summary.turns[0]?.subagents ?? [];
    expect(found?.summary?.totals).toMatchObject({ inputTokens: 40, outputTokens: 4, turns: 1 });
    expect(missing).toMatchObject({ childId: missingId, missing: 'not_found', finished: false });
    expect(summary.totalsWithSubagents).toMatchObject({ inputTokens: 140, outputTokens: 14 });
  });

  it('throws SessionNotFoundError for an unknown session', () => {
    expect(() => readTraceSummary(tempHome(), newSessionId())).toThrow(SessionNotFoundError);
  });
});
