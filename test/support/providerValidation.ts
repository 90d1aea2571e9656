/*
 * What the scripted server rejects in a chat-completions or Anthropic messages request, in the providers' own
 * words (thinking checks: providerThinking.ts; the Responses API: responsesServer.ts).
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The 400 message OpenAI gives for an invalid message sequence, or null when the request is acceptable. */
export function validateOpenAIRequest(body: unknown): string | null {
  if (!isObject(body)) return 'We could not parse the JSON body of your request.';
  if (typeof body['model'] !== 'string') return 'you must provide a model parameter';
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) return "Invalid 'messages': empty array.";
  let pending: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isObject(message)) return `Invalid type for 'messages[${i}]'.`;
    const role = message['role'];
    if (role === 'tool') {
      const id = message['tool_call_id'];
      if (typeof id !== 'string' || !pending.includes(id)) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      }
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`;
    }
    if (!['system', 'developer', 'user', 'assistant'].includes(String(role))) {
      return `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.`;
    }
    if (role === 'assistant' && Array.isArray(message['tool_calls'])) {
      for (const call of message['tool_calls'] as unknown[]) {
        if (!isObject(call) || typeof call['id'] !== 'string' || !isObject(call['function'])) {
          return `Missing required parameter: 'messages[${i}].tool_calls[0].id'.`;
        }
        pending.push(call['id']);
      }
    } else if (message['content'] === undefined || message['content'] === null) {
      return `Invalid value for 'content': expected a string, got null.`;
    }
  }
  if (pending.length > 0) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`;
  }
  return null;
}

/** The 400 message Anthropic gives for an invalid request, or null when the request is acceptable. */
export function validateAnthropicRequest(body: unknown): string | null {
  if (!isObject(body)) return 'invalid request body';
  if (typeof body['model'] !== 'string') return 'model: Field required';
  if (typeof body['max_tokens'] !== 'number') return 'max_tokens: Field required';
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  let previousToolUses: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`;
    const role = message['role'];
    if (role !== 'user' && role !== 'assistant') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    if (i === 0 && role !== 'user') return 'messages: first message must use the "user" role';
    const blocks: unknown[] =
      typeof message['content'] === 'string'
        ? [{ type: 'text', text: message['content'] }]
        : Array.isArray(message['content'])
          ? (message['content'] as unknown[])
          : [];
    if (blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    const results: string[] = [];
    const uses: string[] = [];
    for (const block of blocks) {
      if (!isObject(block)) return `messages.${i}.content: Input should be a valid list`;
      if (block['type'] === 'text' && (typeof block['text'] !== 'string' || block['text'] === '')) {
        return `messages.${i}: text content blocks must be non-empty`;
      }
      if (block['type'] === 'tool_result') results.push(String(block['tool_use_id']));
      if (block['type'] === 'tool_use') uses.push(String(block['id']));
    }
    if (role === 'user') {
      // Tool results come first in their user message; text may only follow them.
      const firstOther = blocks.findIndex((block) => isObject(block) && block['type'] !== 'tool_result');
      const lateResult = blocks.findIndex(
        (block, index) => index > firstOther && isObject(block) && block['type'] === 'tool_result',
      );
      if (firstOther >= 0 && lateResult > firstOther && previousToolUses.length > 0) {
        return `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${previousToolUses.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      const unexpected = results.filter((id) => !previousToolUses.includes(id));
      if (unexpected.length > 0) {
        return `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    const missing = previousToolUses.filter((id) => role !== 'user' || !results.includes(id));
    if (missing.length > 0) {
      return `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    previousToolUses = role === 'assistant' ? uses : [];
  }
  if (previousToolUses.length > 0) {
    return `messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${previousToolUses.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return null;
}
