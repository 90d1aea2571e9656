import { createHmac } from 'node:crypto';

/*
 * Anthropic extended thinking for the scripted server: signed thinking blocks, and the checks the API makes
 * on a request while thinking is on. A signature binds the block's text to the response that made it and to
 * its place among that response's thinking blocks (`<response>.<index>.<count>.<mac>`), so a changed,
 * reordered or dropped block is found the way Anthropic finds it: by the signature.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const SECRET = 'scripted-thinking-key';

function mac(parts: readonly string[]): string {
  return createHmac('sha256', SECRET).update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/** The signature (or redacted data) of thinking block `index` of `count` in response `response`. */
export function signThinking(response: string, index: number, count: number, text: string): string {
  return `${response}.${index}.${count}.${mac([response, String(index), String(count), text])}`;
}

type Signed = { response: string; index: number; count: number; valid: boolean };

function readSignature(signature: unknown, text: string): Signed | undefined {
  if (typeof signature !== 'string') return undefined;
  const [response, index, count, given] = signature.split('.');
  if (response === undefined || index === undefined || count === undefined || given === undefined)
    return undefined;
  const valid = given === mac([response, index, count, text]);
  return { response, index: Number(index), count: Number(count), valid };
}

/** Whether a request turns thinking on (`enabled` with a budget, or `adaptive`). */
export function thinkingEnabled(body: Json): boolean {
  const thinking = body['thinking'];
  return isObject(thinking) && (thinking['type'] === 'enabled' || thinking['type'] === 'adaptive');
}

/**
 * The 400 message Anthropic gives for a request's thinking, or null: the budget's bounds, a sampling change
 * thinking does not allow, a thinking block whose signature does not verify (changed text), blocks of one
 * response out of order or missing, and, while thinking is on, a tool loop whose assistant turn does not
 * start with its thinking.
 */
export function validateThinking(body: Json, messages: readonly unknown[]): string | null {
  const thinking = body['thinking'];
  if (isObject(thinking) && thinking['type'] === 'enabled') {
    const budget = thinking['budget_tokens'];
    if (typeof budget !== 'number' || budget < 1024) {
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    }
    if (typeof body['max_tokens'] === 'number' && budget >= body['max_tokens']) {
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    }
  }
  const enabled = thinkingEnabled(body);
  if (enabled && body['temperature'] !== undefined && body['temperature'] !== 1) {
    return '`temperature` may only be set to 1 when thinking is enabled or in interleaved thinking mode. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message) || message['role'] !== 'assistant' || !Array.isArray(message['content'])) continue;
    const blocks = message['content'] as unknown[];
    const seen = new Map<string, Signed[]>();
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j];
      if (!isObject(block)) continue;
      let signed: Signed | undefined;
      if (block['type'] === 'thinking') {
        signed = readSignature(block['signature'], String(block['thinking']));
      } else if (block['type'] === 'redacted_thinking') {
        const data = String(block['data']);
        const [response, index, count] = data.split('.');
        signed = readSignature(data, `redacted:${response}.${index}.${count}`);
      } else {
        continue;
      }
      if (!signed?.valid) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      const group = seen.get(signed.response) ?? [];
      if (group.length !== signed.index) {
        return `messages.${i}.content.${j}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`;
      }
      group.push(signed);
      seen.set(signed.response, group);
    }
    for (const group of seen.values()) {
      const first = group[0];
      if (first && group.length !== first.count) {
        return `messages.${i}.content: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`;
      }
    }
  }
  if (!enabled) return null;
  // A tool loop in progress: the last user message answers the assistant turn before it with tool results.
  const last = messages.at(-1);
  const assistantIndex = messages.length - 2;
  const assistant = messages[assistantIndex];
  const answersTools =
    isObject(last) &&
    Array.isArray(last['content']) &&
    (last['content'] as unknown[]).some((block) => isObject(block) && block['type'] === 'tool_result');
  if (answersTools && isObject(assistant) && Array.isArray(assistant['content'])) {
    const first: unknown = (assistant['content'] as unknown[])[0];
    const type = isObject(first) ? String(first['type']) : 'nothing';
    if (type !== 'thinking' && type !== 'redacted_thinking') {
      return `messages.${assistantIndex}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
    }
  }
  return null;
}

/** The redacted_thinking `data` for block `index` of `count` (opaque, but verifiable here). */
export function redactedData(response: string, index: number, count: number): string {
  return signThinking(response, index, count, `redacted:${response}.${index}.${count}`);
}
