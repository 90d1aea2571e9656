import { describe, expect, it } from 'vitest';
import { validatePayload } from '../../../../main/core/projection/index.js';
import type { PayloadMessage } from '../../../../main/core/projection/index.js';

const sys: PayloadMessage = { role: 'system', content: 'prompt' };
const user: PayloadMessage = { role: 'user', content: 'goal' };
const calls = (...ids: string[]): PayloadMessage => ({
  role: 'assistant',
  content: '',
  toolCalls: ids.map((id) => ({ id, name: 'grep', arguments: '{}' })),
});
const answer = (toolCallId: string): PayloadMessage => ({ role: 'tool', content: 'ok', toolCallId });

function problemsOf(messages: PayloadMessage[]): string[] {
  const result = validatePayload({ messages });
  return result.ok ? [] : result.problems.map((problem) => `${problem.index}: ${problem.message}`);
}

describe('validatePayload', () => {
  it('accepts calls answered, in any order, by the messages right after them', () => {
    const messages = [sys, user, calls('a', 'b'), answer('b'), answer('a'), { role: 'user', content: 'x' }];
    expect(validatePayload({ messages } as { messages: PayloadMessage[] })).toEqual({ ok: true });
    expect(validatePayload({ messages: [] })).toEqual({ ok: true });
  });

  it('rejects a call left unanswered at the end', () => {
    expect(problemsOf([user, calls('a', 'b'), answer('a')])).toEqual([
      '3: tool call(s) b unanswered: the payload ends before their results',
    ]);
  });

  it('rejects a message between a call and its result', () => {
    const problems = problemsOf([user, calls('a'), user, answer('a')]);
    expect(problems[0]).toBe('2: tool call(s) a unanswered: a user message comes before their results');
    expect(problems[1]).toBe('3: tool message for a does not follow the call it answers');
  });

  it('rejects an orphan tool message and a second answer to the same call', () => {
    expect(problemsOf([user, answer('x')])).toEqual([
      '1: tool message for x does not follow the call it answers',
    ]);
    expect(problemsOf([user, calls('a'), answer('a'), answer('a')])).toEqual([
      '3: tool message for a does not follow the call it answers',
    ]);
    expect(problemsOf([user, calls('a', 'b'), answer('a'), answer('a')])).toEqual([
      '3: tool message for a answers no open call of the assistant message before it',
      '4: tool call(s) b unanswered: the payload ends before their results',
    ]);
  });

  it('rejects a conversation that does not open with a user message', () => {
    expect(problemsOf([sys, { role: 'assistant', content: 'hi' }, user])).toEqual([
      '1: the first non-system message is assistant, providers require user',
    ]);
  });

  it('rejects a system message after the conversation started', () => {
    expect(problemsOf([user, sys])).toEqual(['1: a system message after the conversation started']);
  });

  it('rejects a reused tool-call id', () => {
    expect(problemsOf([user, calls('a'), answer('a'), calls('a'), answer('a')])).toEqual([
      '3: tool call id a is used more than once',
    ]);
  });

  it('rejects malformed messages: unknown role, misplaced ids and calls, blank text, empty toolCalls', () => {
    const malformed = [
      user,
      { role: 'robot', content: 'beep' },
      { role: 'user', content: 'x', toolCallId: 'a' },
      { role: 'user', content: 'x', toolCalls: [{ id: 'q', name: 'n', arguments: '{}' }] },
      { role: 'user', content: ' \n' },
      { role: 'assistant', content: '', toolCalls: [] },
      { role: 'tool', content: 'x' },
    ] as PayloadMessage[];
    const problems = problemsOf(malformed);
    for (const expected of [
      '1: unknown role robot',
      '2: a user message carries toolCallId',
      '3: a user message carries tool calls',
      '4: user message has blank content (Anthropic rejects it)',
      '5: toolCalls is present but empty (OpenAI rejects it)',
      '5: assistant message has blank content (Anthropic rejects it)',
      '6: a tool message without toolCallId',
    ]) {
      expect(problems).toContain(expected);
    }
  });

  it('refuses a blank environment block and takes a non-blank one', () => {
    const messages: PayloadMessage[] = [{ role: 'user', content: 'goal' }];
    expect(validatePayload({ messages, environment: '<environment>\n</environment>' })).toEqual({ ok: true });
    expect(validatePayload({ messages, environment: ' \n' })).toEqual({
      ok: false,
      problems: [{ index: 1, message: 'the environment block is blank (Anthropic rejects blank text)' }],
    });
  });
});
