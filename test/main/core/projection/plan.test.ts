import { describe, expect, it } from 'vitest';
import {
  currentPlan,
  formatPlan,
  PLAN_HANDLE_HEADING,
  projectPayload,
  validatePayload,
} from '../../../../main/core/projection/index.js';
import { LogBuilder } from './eventFactory.js';

const todoCall = (id: string, todos: unknown[]) => ({
  id,
  name: 'todo',
  arguments: JSON.stringify({ todos }),
});
const step = (content: string, status: 'pending' | 'in_progress' | 'completed') => ({ content, status });

function todoResult(log: LogBuilder, toolCallId: string, isError = false) {
  return log.add({
    kind: 'tool_result',
    toolCallId,
    tool: 'todo',
    content: 'Plan updated',
    ...(isError ? { isError } : {}),
  });
}

describe('currentPlan', () => {
  it('is the latest successful todo call: a failed one leaves it, [] clears it', () => {
    const log = new LogBuilder();
    log.add({
      kind: 'session_created',
      sessionId: 's',
      projectFolder: '/p',
      provider: 'openai',
      model: 'm',
      contextWindow: 1000,
      toolMode: 'write',
      policy: 'ask',
    });
    expect(currentPlan(log.events)).toBeUndefined();
    log.user('add rate limiting');
    log.assistant('', [todoCall('t1', [step('Read', 'in_progress'), step('Limit', 'pending')])]);
    const first = todoResult(log, 't1');
    expect(currentPlan(log.events)).toEqual({
      items: [step('Read', 'in_progress'), step('Limit', 'pending')],
      resultSeq: first.seq,
    });
    // A call still unanswered, and one whose result is an error, change nothing.
    log.assistant('', [
      todoCall('t2', [step('Read', 'completed'), step('Limit', 'in_progress'), step('Bad', 'in_progress')]),
    ]);
    expect(currentPlan(log.events)?.resultSeq).toBe(first.seq);
    todoResult(log, 't2', true);
    expect(currentPlan(log.events)?.resultSeq).toBe(first.seq);
    log.assistant('', [
      { id: 'g', name: 'grep', arguments: '{"pattern":"x"}' },
      todoCall('t3', [step('Read', 'completed'), step('Limit', 'in_progress')]),
    ]);
    log.add({ kind: 'tool_result', toolCallId: 'g', tool: 'grep', content: 'No matches.' });
    const third = todoResult(log, 't3');
    expect(currentPlan(log.events)).toEqual({
      items: [step('Read', 'completed'), step('Limit', 'in_progress')],
      resultSeq: third.seq,
    });
    // A result naming a call id another tool used is not a plan; [] clears the plan.
    log.assistant('', [{ id: 't1', name: 'grep', arguments: '{}' }]);
    todoResult(log, 't1');
    expect(currentPlan(log.events)?.resultSeq).toBe(third.seq);
    log.assistant('', [todoCall('t4', [])]);
    const cleared = todoResult(log, 't4');
    expect(currentPlan(log.events)).toEqual({ items: [], resultSeq: cleared.seq });
  });

  it('ignores arguments that are not a plan (an imported log can hold anything)', () => {
    const log = new LogBuilder();
    log.user('x');
    log.assistant('', [{ id: 't', name: 'todo', arguments: '{"todos":"nope"' }]);
    todoResult(log, 't');
    expect(currentPlan(log.events)).toBeUndefined();
  });
});

describe('a compaction’s plan in the payload', () => {
  it('is re-stated as a checklist right after the summary, before the pinned goal, byte-stable', () => {
    const log = new LogBuilder();
    log.add({
      kind: 'session_created',
      sessionId: 's',
      projectFolder: '/p',
      provider: 'openai',
      model: 'm',
      contextWindow: 1000,
      toolMode: 'write',
      policy: 'ask',
    });
    log.user('add rate limiting');
    log.assistant('', [todoCall('t1', [step('Read', 'completed'), step('Limit', 'in_progress')])]);
    todoResult(log, 't1');
    const plan = [step('Read', 'completed'), step('Limit', 'in_progress'), step('Test', 'pending')];
    log.add({ kind: 'compaction', through: 4, summary: 'Read the code.', pinned: 'add rate limiting', plan });
    log.user('go on');
    const payload = projectPayload(log.events, { system: 'You are Keel.' });
    expect(payload.messages.map((m) => m.role)).toEqual(['system', 'system', 'system', 'user', 'user']);
    expect(payload.messages[2]?.content).toBe(
      `${PLAN_HANDLE_HEADING}\n- [x] Read\n- [>] Limit (in progress)\n- [ ] Test`,
    );
    expect(formatPlan(plan)).toBe('- [x] Read\n- [>] Limit (in progress)\n- [ ] Test');
    expect(validatePayload(payload)).toEqual({ ok: true });
    // A compaction without a plan (older ones, or none was made) adds nothing.
    const bare = new LogBuilder();
    bare.user('goal');
    bare.add({ kind: 'compaction', through: 1, summary: 's', pinned: 'goal' });
    bare.user('next');
    expect(projectPayload(bare.events, { system: 'S' }).messages.map((m) => m.role)).toEqual([
      'system',
      'system',
      'user',
      'user',
    ]);
  });
});
