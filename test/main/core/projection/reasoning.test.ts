import { describe, expect, it } from 'vitest';
import type { ReasoningPart } from '../../../../main/common/events.js';
import type { Payload } from '../../../../main/common/payload.js';
import { projectPayload } from '../../../../main/core/projection/projectPayload.js';
import { validatePayload } from '../../../../main/core/projection/validate.js';
import { toAnthropicRequest, toOpenAIRequest, toResponsesRequest } from '../../../../main/providers/index.js';
import { call, LogBuilder } from './eventFactory.js';

const system = 'You are Keel.';
const thinking: ReasoningPart = { type: 'thinking', thinking: 'Plan.', signature: 'sig-1' };
const item: ReasoningPart = { type: 'reasoning', id: 'rs_1', encryptedContent: 'enc', summary: ['Plan.'] };
const local: ReasoningPart = { type: 'reasoning_text', text: 'Plan.' };

describe('reasoning in the projection', () => {
  it("puts each assistant message's logged parts on its payload message, in order, unchanged", () => {
    const log = new LogBuilder();
    log.user('go');
    log.add({
      kind: 'assistant_message',
      content: '',
      toolCalls: [call('c1'), call('c2')],
      reasoning: [thinking, { type: 'redacted_thinking', data: 'opaque', afterCalls: 1 }],
    });
    log.result('c1', 'r1');
    log.result('c2', 'r2');
    const payload = projectPayload(log.events, { system });
    expect(validatePayload(payload)).toEqual({ ok: true });
    expect(payload.messages[2]?.reasoning).toEqual([
      thinking,
      { type: 'redacted_thinking', data: 'opaque', afterCalls: 1 },
    ]);
    // Anthropic: thinking first, the redacted block after the first tool_use where it streamed.
    const { messages } = toAnthropicRequest(payload, []);
    const blocks = messages[1]?.content as { type: string }[];
    expect(blocks.map((block) => block.type)).toEqual([
      'thinking',
      'tool_use',
      'redacted_thinking',
      'tool_use',
    ]);
  });

  it('leaves an older log (no reasoning field) and an interrupted message without reasoning', () => {
    const log = new LogBuilder();
    log.user('go');
    log.assistant('plain');
    log.add({ kind: 'interrupted', content: 'half', toolCalls: [], reasoning: [local] });
    const payload = projectPayload(log.events, { system });
    expect(payload.messages.map((message) => 'reasoning' in message)).toEqual([false, false, false, false]);
  });

  it('drops the reasoning of what a compaction replaced, with the rest of it', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.add({ kind: 'assistant_message', content: 'a', toolCalls: [call('c1')], reasoning: [thinking] });
    log.result('c1', 'r1');
    log.compaction(3, 'did c1', 'goal');
    log.user('next');
    log.add({ kind: 'assistant_message', content: 'b', toolCalls: [], reasoning: [item] });
    const payload = projectPayload(log.events, { system });
    expect(payload.messages.flatMap((message) => message.reasoning ?? [])).toEqual([item]);
  });

  it('sends each provider only its own format: no Anthropic blocks to OpenAI, no items to Anthropic', () => {
    const payload: Payload = {
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'x', toolCalls: [call('c1')], reasoning: [thinking, item, local] },
        { role: 'tool', content: 'r', toolCallId: 'c1' },
      ],
    };
    const anthropic = JSON.stringify(toAnthropicRequest(payload, []).messages);
    expect(anthropic).toContain('"thinking"');
    expect(anthropic).not.toContain('rs_1');
    const responses = toResponsesRequest(payload, []).input;
    expect(responses.map((entry) => ('type' in entry ? entry.type : undefined) ?? 'message')).toEqual([
      'message',
      'reasoning',
      'message',
      'function_call',
      'function_call_output',
    ]);
    expect(JSON.stringify(responses)).not.toContain('sig-1');
    expect(JSON.stringify(toOpenAIRequest(payload, []).messages)).not.toContain('reasoning');
    // DeepSeek's thinking mode needs a tool-calling turn's reasoning_content back; only it is sent it.
    const deepseek = toOpenAIRequest(payload, [], { replayToolReasoning: true }).messages[1];
    expect(deepseek).toMatchObject({ role: 'assistant', reasoning_content: 'Plan.' });
  });

  it('replays reasoning only to the model that produced it (signatures are bound to it): not after a model switch', () => {
    const log = new LogBuilder();
    log.user('go');
    log.add({
      kind: 'assistant_message',
      content: 'x',
      toolCalls: [],
      reasoning: [thinking, item],
      model: 'model-a',
    });
    const payload = projectPayload(log.events, { system });
    expect(payload.messages[2]?.reasoningModel).toBe('model-a');
    const anthropic = (model: string) => JSON.stringify(toAnthropicRequest(payload, [], model).messages);
    expect(anthropic('model-a')).toContain('sig-1');
    expect(anthropic('model-b')).not.toContain('sig-1');
    const responses = (model: string) => JSON.stringify(toResponsesRequest(payload, [], model).input);
    expect(responses('model-a')).toContain('rs_1');
    expect(responses('model-b')).not.toContain('rs_1');
  });

  it('refuses reasoning where a provider could not replay it', () => {
    const problems = (payload: Payload) => {
      const result = validatePayload(payload);
      return result.ok ? [] : result.problems.map((problem) => problem.message);
    };
    expect(
      problems({
        messages: [
          { role: 'user', content: 'go', reasoning: [local] },
          { role: 'assistant', content: 'x', reasoning: [{ ...thinking, signature: '' }] },
          { role: 'user', content: 'more' },
          { role: 'assistant', content: 'y', reasoning: [{ ...local, afterCalls: 2 }] },
        ],
      }),
    ).toEqual([
      'a user message carries reasoning',
      'a thinking block without its signature (Anthropic rejects it)',
      'a reasoning part sits after call 2 of 0',
    ]);
  });
});
