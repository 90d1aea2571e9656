import { createHmac } from 'node:crypto';

/*
 * OpenAI's Responses API (`POST /v1/responses`) for the scripted server: what it rejects in `input`, and the
 * event stream of one scripted reply (reasoning summary, text, function calls, `response.completed` with
 * usage). Encrypted reasoning is an HMAC of the item here, so a changed item is found.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const SECRET = 'scripted-reasoning-key';

/** The `encrypted_content` of reasoning item `id` with these summaries. */
export function encryptReasoning(id: string, summary: readonly string[]): string {
  return `enc_${createHmac('sha256', SECRET)
    .update([id, ...summary].join('\u0000'))
    .digest('hex')}`;
}

const summaryTexts = (item: Json): string[] =>
  Array.isArray(item['summary'])
    ? (item['summary'] as unknown[]).map((part) => (isObject(part) ? String(part['text']) : ''))
    : [];

/**
 * The 400 message OpenAI gives for a Responses request, or null: a `function_call_output` whose `call_id`
 * no earlier `function_call` made, a `function_call` left without its output, a reasoning item that cannot
 * be read back (no `encrypted_content` while `store` is false, or content that does not verify) or that is
 * not followed by the item it led to.
 */
export function validateResponsesRequest(body: unknown): string | null {
  if (!isObject(body)) return 'We could not parse the JSON body of your request.';
  if (typeof body['model'] !== 'string') return "Missing required parameter: 'model'.";
  const input = body['input'];
  if (!Array.isArray(input) || input.length === 0) return "Invalid 'input': empty array.";
  const stateless = body['store'] === false;
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    if (!isObject(item)) return `Invalid type for 'input[${i}]'.`;
    const type = item['type'] ?? (item['role'] !== undefined ? 'message' : undefined);
    if (type === 'message') {
      if (!['system', 'developer', 'user', 'assistant'].includes(String(item['role']))) {
        return `Invalid value: '${String(item['role'])}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`;
      }
    } else if (type === 'function_call') {
      calls.add(String(item['call_id']));
    } else if (type === 'function_call_output') {
      const id = String(item['call_id']);
      if (!calls.has(id)) return `No tool call found for function call output with call_id ${id}.`;
      answered.add(id);
    } else if (type === 'reasoning') {
      const id = String(item['id']);
      const encrypted = item['encrypted_content'];
      if (typeof encrypted !== 'string' || encrypted === '') {
        if (stateless) {
          return `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
        }
      } else if (encrypted !== encryptReasoning(id, summaryTexts(item))) {
        return `The encrypted content for item ${id} could not be verified.`;
      }
      const next: unknown = input[i + 1];
      const follows =
        isObject(next) &&
        (next['type'] === 'function_call' || next['type'] === 'reasoning' || next['role'] === 'assistant');
      if (!follows)
        return `Item '${id}' of type 'reasoning' was provided without its required following item.`;
    } else {
      return `Invalid value: '${JSON.stringify(type)}'. Supported values are 'message', 'function_call', 'function_call_output' and 'reasoning' here.`;
    }
  }
  for (const id of calls) if (!answered.has(id)) return `No tool output found for function call ${id}.`;
  return null;
}

/** One scripted reply for the Responses stream. */
export type ResponsesReply = {
  text: string[];
  reasoning: string[];
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; reasoningTokens: number };
  /** A refusal part streamed after the text (`response.refusal.delta`). */
  refusal?: string[];
  /** The response ends `incomplete` for this reason (`max_output_tokens`, `content_filter`). */
  incomplete?: string;
};

/** Whether a request asks for reasoning (an effort other than `none`). */
export function reasoningRequested(body: Json): boolean {
  const reasoning = body['reasoning'];
  return isObject(reasoning) && reasoning['effort'] !== undefined && reasoning['effort'] !== 'none';
}

/** The SSE events of one reply, in the order OpenAI sends them; `delta` marks what a test may cut after. */
export function responsesEvents(
  reply: ResponsesReply,
  body: Json,
  responseNumber: number,
): { data: string; delta: boolean }[] {
  let sequence = 0;
  const out: { data: string; delta: boolean }[] = [];
  const send = (type: string, data: Json, delta = false) =>
    out.push({
      data: `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`,
      delta,
    });
  const id = `resp_${responseNumber}`;
  const base = { id, object: 'response', created_at: 1_700_000_000, model: String(body['model']) };
  send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  send('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
  const output: Json[] = [];
  const include = Array.isArray(body['include']) ? (body['include'] as unknown[]) : [];
  if (reply.reasoning.length > 0 && reasoningRequested(body)) {
    const item = `rs_${responseNumber}`;
    const index = output.length;
    send('response.output_item.added', {
      output_index: index,
      item: { id: item, type: 'reasoning', summary: [] },
    });
    const full = reply.reasoning.join('');
    send('response.reasoning_summary_part.added', {
      item_id: item,
      output_index: index,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    for (const piece of reply.reasoning) {
      send(
        'response.reasoning_summary_text.delta',
        { item_id: item, output_index: index, summary_index: 0, delta: piece },
        true,
      );
    }
    send('response.reasoning_summary_text.done', {
      item_id: item,
      output_index: index,
      summary_index: 0,
      text: full,
    });
    send('response.reasoning_summary_part.done', {
      item_id: item,
      output_index: index,
      summary_index: 0,
      part: { type: 'summary_text', text: full },
    });
    const done: Json = { id: item, type: 'reasoning', summary: [{ type: 'summary_text', text: full }] };
    if (include.includes('reasoning.encrypted_content'))
      done['encrypted_content'] = encryptReasoning(item, [full]);
    send('response.output_item.done', { output_index: index, item: done });
    output.push(done);
  }
  const refusal = reply.refusal ?? [];
  if (reply.text.length > 0 || refusal.length > 0) {
    const item = `msg_${responseNumber}`;
    const index = output.length;
    const message = { id: item, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    send('response.output_item.added', { output_index: index, item: message });
    const parts: Json[] = [];
    if (reply.text.length > 0) {
      send('response.content_part.added', {
        item_id: item,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      for (const piece of reply.text) {
        send(
          'response.output_text.delta',
          { item_id: item, output_index: index, content_index: 0, delta: piece, logprobs: [] },
          true,
        );
      }
      const full = reply.text.join('');
      send('response.output_text.done', {
        item_id: item,
        output_index: index,
        content_index: 0,
        text: full,
        logprobs: [],
      });
      const part = { type: 'output_text', text: full, annotations: [] };
      send('response.content_part.done', { item_id: item, output_index: index, content_index: 0, part });
      parts.push(part);
    }
    if (refusal.length > 0) {
      const content_index = parts.length;
      send('response.content_part.added', {
        item_id: item,
        output_index: index,
        content_index,
        part: { type: 'refusal', refusal: '' },
      });
      for (const piece of refusal) {
        send(
          'response.refusal.delta',
          { item_id: item, output_index: index, content_index, delta: piece },
          true,
        );
      }
      const said = { type: 'refusal', refusal: refusal.join('') };
      send('response.refusal.done', {
        item_id: item,
        output_index: index,
        content_index,
        refusal: said.refusal,
      });
      send('response.content_part.done', { item_id: item, output_index: index, content_index, part: said });
      parts.push(said);
    }
    const done = { ...message, status: 'completed', content: parts };
    send('response.output_item.done', { output_index: index, item: done });
    output.push(done);
  }
  for (const call of reply.toolCalls) {
    const item = `fc_${responseNumber}_${output.length}`;
    const index = output.length;
    const added = { id: item, type: 'function_call', call_id: call.id, name: call.name, arguments: '' };
    send('response.output_item.added', { output_index: index, item: added }, true);
    const half = Math.ceil(call.arguments.length / 2);
    for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (piece) {
        send(
          'response.function_call_arguments.delta',
          { item_id: item, output_index: index, delta: piece },
          true,
        );
      }
    }
    send('response.function_call_arguments.done', {
      item_id: item,
      output_index: index,
      arguments: call.arguments,
    });
    const done = { ...added, arguments: call.arguments, status: 'completed' };
    send('response.output_item.done', { output_index: index, item: done });
    output.push(done);
  }
  const { usage } = reply;
  const ended = reply.incomplete ? 'incomplete' : 'completed';
  send(`response.${ended}`, {
    response: {
      ...base,
      status: ended,
      ...(reply.incomplete ? { incomplete_details: { reason: reply.incomplete } } : {}),
      output,
      usage: {
        input_tokens: usage.inputTokens + usage.cacheReadTokens,
        input_tokens_details: { cached_tokens: usage.cacheReadTokens, cache_write_tokens: 0 },
        output_tokens: usage.outputTokens,
        output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
        total_tokens: usage.inputTokens + usage.cacheReadTokens + usage.outputTokens,
      },
    },
  });
  return out;
}
