import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

/*
 * The stand-in for "what the provider reports" in these tests: OpenAI's documented way to count a chat
 * request for its o200k models (the openai-cookbook "How to count tokens with tiktoken": 3 tokens per
 * message + the tokens of every value + 3 for the reply priming; tools by the cookbook's
 * num_tokens_for_tools formula for gpt-4o: 7 per function, 3 per property list, 3 per property, 12 at
 * the end, over "name:description" and "key:type:description" lines). Assistant tool calls are not in
 * the cookbook; they are counted as name + arguments + 3 per call. It works on the wire body the
 * ProviderServer receives, so it sees exactly what was sent, independently of Keel's estimator.
 */

/**
 * The estimation error, stated: against OpenAI's documented count (reference.ts) of the very request
 * sent, the estimate of the messages is within ESTIMATE_MESSAGES_ERROR (measured: -1.2%..0%); the tool
 * definitions, counted as their JSON text, deliberately on the high side, are over-counted by at most
 * ESTIMATE_TOOLS_OVER (measured: +35% / +37%, +2% / +4% of a whole request). The trigger's measure (the
 * last request as reported + the events appended since, estimated) is within 3% (measured: < 0.1%).
 * Anthropic's tokenizer is not public: its estimate is scaled by 1.3 (factorFor), an over-count.
 */
export const ESTIMATE_MESSAGES_ERROR = 0.03;
export const ESTIMATE_TOOLS_OVER = 0.4;

const encoder = new Tiktoken(o200k);
const count = (text: string) => encoder.encode(text, [], []).length;

type WireCall = { function?: { name?: string; arguments?: string } };
type WireMessage = Record<string, unknown> & { tool_calls?: WireCall[] };
type WireTool = {
  function?: { name?: string; description?: string; parameters?: { properties?: Record<string, unknown> } };
};

function stripPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

/** The cookbook's count for tool definitions (gpt-4o constants). */
export function referenceToolTokens(tools: readonly unknown[]): number {
  if (tools.length === 0) return 0;
  let total = 0;
  for (const tool of tools as readonly WireTool[]) {
    const fn = tool.function ?? {};
    total += 7 + count(`${fn.name ?? ''}:${stripPeriod(fn.description ?? '')}`);
    const properties = fn.parameters?.properties ?? {};
    const keys = Object.keys(properties);
    if (keys.length > 0) {
      total += 3;
      for (const key of keys) {
        const property = (properties[key] ?? {}) as { type?: unknown; description?: unknown; enum?: unknown };
        total += 3;
        if (Array.isArray(property.enum)) {
          total += -3;
          for (const item of property.enum) total += 3 + count(String(item));
        }
        const type = typeof property.type === 'string' ? property.type : 'any';
        const description = typeof property.description === 'string' ? property.description : '';
        total += count(`${key}:${type}:${stripPeriod(description)}`);
      }
    }
  }
  return total + 12;
}

/** The cookbook's count for chat messages (+ tool calls as name + arguments + 3 each). */
export function referenceMessageTokens(messages: readonly WireMessage[]): number {
  let total = 3;
  for (const message of messages) {
    total += 3;
    for (const [key, value] of Object.entries(message)) {
      if (key === 'tool_calls') {
        for (const call of (value as WireCall[] | undefined) ?? []) {
          total += 3 + count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
        }
      } else if (typeof value === 'string') {
        total += count(value);
        if (key === 'name') total += 1;
      }
    }
  }
  return total;
}

type ResponsesItem = Record<string, unknown> & { type?: string; role?: string };
type ResponsesTool = {
  name?: string;
  description?: string;
  parameters?: { properties?: Record<string, unknown> };
};

/**
 * A request body in chat-completions shape: as sent, or (OpenAI's own endpoint speaks the Responses API)
 * rebuilt from Responses `input` items: messages as they are, consecutive function calls as one assistant
 * message's tool calls, each function_call_output as a tool message, reasoning items left out.
 */
export function chatShapeOf(body: unknown): { messages: WireMessage[]; tools: WireTool[] } {
  const request = body as { messages?: WireMessage[]; tools?: unknown[]; input?: ResponsesItem[] };
  if (!Array.isArray(request.input)) {
    return { messages: request.messages ?? [], tools: (request.tools ?? []) as WireTool[] };
  }
  const messages: WireMessage[] = [];
  for (const item of request.input) {
    if (item.type === 'function_call') {
      const call = { function: { name: String(item['name']), arguments: String(item['arguments']) } };
      const last = messages.at(-1);
      if (last?.['role'] === 'assistant' && last.tool_calls) last.tool_calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', content: String(item['output']), tool_call_id: String(item['call_id']) });
    } else if (item.type !== 'reasoning') {
      messages.push({ role: String(item.role), content: item['content'] });
    }
  }
  const tools = ((request.tools ?? []) as ResponsesTool[]).map((tool) => ({
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return { messages, tools };
}

/** What a provider would report as input tokens for an OpenAI request body (chat completions or Responses). */
export function referenceRequestTokens(body: unknown): number {
  const request = chatShapeOf(body);
  return referenceMessageTokens(request.messages ?? []) + referenceToolTokens(request.tools ?? []);
}

/** Tokens of a reply text, as a provider would report its output. */
export function referenceTextTokens(text: string): number {
  return count(text);
}
