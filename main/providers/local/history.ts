import type { Payload } from '../../common/payload.js';
import { withImageNotes } from '../toolImages.js';
import type { ToolSpec } from '../types.js';
import type { HistoryItem } from './protocol.js';

type ModelItem = Extract<HistoryItem, { type: 'model' }>;
type CallItem = Exclude<ModelItem['response'][number], string>;

/**
 * The projected payload as node-llama-cpp's chat history, which the model's own chat template then renders.
 * An assistant message becomes a model response holding its text and its calls, each call with the result of its
 * tool message (the runtime renders call and result in the template's own syntax). The history always ends in a
 * model response for the runtime to continue: an empty one after a user message, or the one whose calls just got
 * their results (a tool loop continues the same response, so its tokens are a pure extension of the last request).
 *
 * `environment` (volatile: date, git, box) is attached to the newest user message as its own paragraph. The caller
 * passes back the environment each earlier user message was first sent with (`environmentOf`), so an earlier
 * message renders exactly as it did and its KV cache stays valid.
 */
export function toHistory(
  payload: Payload,
  environmentOf: (userIndex: number, text: string) => string | undefined,
): { history: HistoryItem[]; sentEnvironment?: { userIndex: number; text: string; environment: string } } {
  const history: HistoryItem[] = [];
  const calls = new Map<string, CallItem>();
  let userIndex = -1;
  let lastUser: { item: { type: 'user'; text: string }; index: number; text: string } | undefined;
  for (const message of payload.messages) {
    if (message.role === 'system') {
      history.push({ type: 'system', text: message.content });
    } else if (message.role === 'user') {
      userIndex += 1;
      const earlier = environmentOf(userIndex, message.content);
      const item = { type: 'user' as const, text: withEnvironment(message.content, earlier) };
      history.push(item);
      lastUser = { item, index: userIndex, text: message.content };
    } else if (message.role === 'assistant') {
      const response: ModelItem['response'] = message.content ? [message.content] : [];
      for (const call of message.toolCalls ?? []) {
        const item: CallItem = {
          type: 'functionCall',
          id: call.id,
          name: call.name,
          params: parseArguments(call.arguments),
          result: '',
        };
        calls.set(call.id, item);
        response.push(item);
      }
      history.push({ type: 'model', response });
    } else {
      const call = message.toolCallId === undefined ? undefined : calls.get(message.toolCallId);
      const text = withImageNotes(message.content, message.images, { unsupported: true });
      if (call) call.result = message.isError ? { error: text } : text;
      else history.push({ type: 'user', text: `Tool result:\n${text}` });
    }
  }
  const last = history.at(-1);
  const continues = last?.type === 'model' && last.response.some((part) => typeof part !== 'string');
  if (!continues) history.push({ type: 'model', response: [] });
  let sentEnvironment: { userIndex: number; text: string; environment: string } | undefined;
  if (payload.environment && lastUser && environmentOf(lastUser.index, lastUser.text) === undefined) {
    lastUser.item.text = withEnvironment(lastUser.text, payload.environment);
    sentEnvironment = { userIndex: lastUser.index, text: lastUser.text, environment: payload.environment };
  }
  return { history, ...(sentEnvironment ? { sentEnvironment } : {}) };
}

function withEnvironment(text: string, environment: string | undefined): string {
  return environment ? `${text}\n\n<environment>\n${environment}\n</environment>` : text;
}

/** A logged call's arguments: the JSON the model wrote; anything else is kept as the text it was. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The mode's tools as node-llama-cpp functions, each schema reduced to what its JSON grammar can enforce. */
export function toFunctions(
  tools: readonly ToolSpec[],
): Record<string, { description?: string; params?: Record<string, unknown> }> {
  return Object.fromEntries(
    tools.map((tool) => [
      tool.name,
      { description: tool.description, params: grammarSchema(tool.parameters) },
    ]),
  );
}

const BASIC = ['string', 'number', 'integer', 'boolean', 'null'];
const FORMATS = new Set(['date-time', 'time', 'date']);

/**
 * A JSON Schema in the subset node-llama-cpp turns into a grammar: types (a list of basic types too), enum,
 * const, oneOf (anyOf becomes oneOf), properties/required/additionalProperties, items/prefixItems, lengths and
 * the date formats. Keywords it cannot enforce (pattern, minimum, default, …) are dropped: the tool's own
 * validation still judges the arguments; the grammar only guarantees the call is well-formed.
 */
export function grammarSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { type: BASIC };
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if (typeof s.description === 'string') out.description = s.description;
  if ('const' in s) return { ...out, const: s.const };
  if (Array.isArray(s.enum)) return { ...out, enum: s.enum };
  const union = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : undefined;
  if (union) return { ...out, oneOf: union.map(grammarSchema) };
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : typeof s.type === 'string' ? [s.type] : [];
  if (types.length > 1) {
    if (types.every((t) => typeof t === 'string' && BASIC.includes(t))) return { ...out, type: types };
    return { ...out, oneOf: types.map((t) => grammarSchema({ ...s, type: t })) };
  }
  const type = types[0] ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  if (type === 'object') {
    const properties = (typeof s.properties === 'object' && s.properties) || {};
    out.type = 'object';
    // node-llama-cpp's grammar writes every listed property: an optional one may be null, which
    // `dropOptionalNulls` removes before the tool sees the call.
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    out.properties = Object.fromEntries(
      Object.entries(properties as Record<string, unknown>).map(([k, v]) => [
        k,
        required.has(k) ? grammarSchema(v) : { oneOf: [{ type: 'null' }, grammarSchema(v)] },
      ]),
    );
    if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null)
      out.additionalProperties = grammarSchema(s.additionalProperties);
    else if (s.additionalProperties === true || !s.properties) out.additionalProperties = true;
    return out;
  }
  if (type === 'array') {
    out.type = 'array';
    if (s.items !== undefined && typeof s.items === 'object') out.items = grammarSchema(s.items);
    if (Array.isArray(s.prefixItems)) out.prefixItems = s.prefixItems.map(grammarSchema);
    for (const key of ['minItems', 'maxItems'] as const) if (typeof s[key] === 'number') out[key] = s[key];
    return out;
  }
  if (type === 'string') {
    out.type = 'string';
    for (const key of ['minLength', 'maxLength'] as const) if (typeof s[key] === 'number') out[key] = s[key];
    if (typeof s.format === 'string' && FORMATS.has(s.format)) out.format = s.format;
    return out;
  }
  if (typeof type === 'string' && BASIC.includes(type)) return { ...out, type };
  return { ...out, type: BASIC };
}

/** A call's arguments without the nulls the grammar let the model write for optional properties. */
export function dropOptionalNulls(
  argumentsText: string,
  schema: Record<string, unknown> | undefined,
): string {
  if (!schema) return argumentsText;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return argumentsText;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return argumentsText;
  const kept = Object.entries(args as Record<string, unknown>).filter(
    ([k, v]) => v !== null || required.has(k),
  );
  return JSON.stringify(Object.fromEntries(kept));
}
