import { ENVIRONMENT_OPENING } from '../../main/core/prompts/environment.js';
import type { RecordedRequest, ScriptStep, ScriptedToolCall } from '../support/providerServer.js';

/*
 * The scripted "model" of a trajectory: one step per provider request, each saying what the model must have
 * been shown since its last message (tool results, a new user message) and what it answers. A real model
 * reacts to what it sees; so does this one: a step whose expectation fails is recorded as a failure and the
 * model ends its turn, so a trajectory fails where the harness stopped giving the model what it needed.
 */

/** One tool call of a step. */
export type Call = { tool: string; args: Record<string, unknown> };

/** What the model was shown since its previous message, read from the request's wire format. */
export type Seen = {
  /** The tool results at the end of the conversation, in call order (empty after a user message). */
  results: string[];
  /** The newest user message's text, when the user spoke last (the environment block left out). */
  user: string | undefined;
  /** The whole request body as sent. */
  raw: string;
};

/** One answer of the model. */
export type ModelStep = {
  /** Patterns the new tool results (joined) or the new user message must match. */
  sees?: RegExp[];
  text?: string;
  calls?: Call[] | ((seen: Seen) => Call[]);
  /** Pause between streamed deltas (a turn the user stops mid-stream). */
  delayMs?: number;
};

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) => (isObject(block) && typeof block['text'] === 'string' ? block['text'] : ''))
      .join('');
  }
  return '';
}

/** What a request shows the model since its last message, for both wire formats. */
export function seenIn(request: RecordedRequest): Seen {
  const body = request.body as { messages?: unknown[] };
  const messages = (body.messages ?? []).filter(isObject);
  const results: string[] = [];
  let user: string | undefined;
  if (request.format === 'responses') {
    // OpenAI's Responses API: `input` items; tool results are function_call_output items.
    const items = ((request.body as { input?: unknown[] }).input ?? []).filter(isObject);
    const last = items.at(-1);
    if (last?.['role'] === 'user' && textOf(last['content']).startsWith(ENVIRONMENT_OPENING)) items.pop();
    const end = items.at(-1);
    if (end?.['role'] === 'user') user = textOf(end['content']);
    for (let i = items.length - 1; i >= 0 && items[i]?.['type'] === 'function_call_output'; i--) {
      results.unshift(textOf(items[i]?.['output']));
    }
  } else if (request.format === 'openai') {
    const rest = [...messages];
    const last = rest.at(-1);
    if (last?.['role'] === 'user' && textOf(last['content']).startsWith(ENVIRONMENT_OPENING)) rest.pop();
    const end = rest.at(-1);
    if (end?.['role'] === 'user') user = textOf(end['content']);
    for (let i = rest.length - 1; i >= 0 && rest[i]?.['role'] === 'tool'; i--) {
      results.unshift(textOf(rest[i]?.['content']));
    }
  } else {
    const last = messages.at(-1);
    const blocks = Array.isArray(last?.['content'])
      ? (last['content'] as unknown[]).filter(isObject)
      : [{ type: 'text', text: textOf(last?.['content']) }];
    for (const block of blocks) {
      if (block['type'] === 'tool_result') results.push(textOf(block['content']));
    }
    const texts = blocks
      .filter((block) => block['type'] === 'text')
      .map((block) => String(block['text']))
      .filter((text) => !text.startsWith(ENVIRONMENT_OPENING));
    if (results.length === 0 && texts.length > 0) user = texts.join('\n');
  }
  return { results, user, raw: request.raw };
}

/** The ids real models give tool calls: Claude's `toolu_01…`, GPT's `call_…`. */
function idFactory(style: 'claude' | 'gpt'): () => string {
  let n = 0;
  return () => {
    n += 1;
    const tail = `${n.toString(36).padStart(4, '0')}Kq7ZtR2mXv9s`;
    return style === 'claude' ? `toolu_01${tail}` : `call_${tail}`;
  };
}

/** A scripted model that answers each request with its next step and keeps what went wrong. */
export class TrajectoryModel {
  readonly failures: string[] = [];
  readonly seen: Seen[] = [];
  private next = 0;
  private readonly nextId: () => string;

  constructor(
    private readonly steps: readonly ModelStep[],
    style: 'claude' | 'gpt',
  ) {
    this.nextId = idFactory(style);
  }

  /** Steps not yet answered. */
  get remaining(): number {
    return this.steps.length - this.next;
  }

  /** The server's `respond` hook. */
  readonly respond = (request: RecordedRequest): ScriptStep => {
    const seen = seenIn(request);
    this.seen.push(seen);
    const index = this.next;
    const step = this.steps[index];
    if (step === undefined) {
      this.failures.push(`request ${this.seen.length}: the script has no step left`);
      return { kind: 'reply', text: 'script exhausted' };
    }
    this.next += 1;
    const shown = seen.results.length > 0 ? seen.results.join('\n---\n') : (seen.user ?? '');
    for (const pattern of step.sees ?? []) {
      if (!pattern.test(shown)) {
        this.failures.push(
          `step ${index + 1} expected to see ${pattern} but was shown:\n${shown.slice(0, 2000)}`,
        );
        return { kind: 'reply', text: 'unexpected tool result; stopping' };
      }
    }
    const calls = typeof step.calls === 'function' ? step.calls(seen) : (step.calls ?? []);
    const toolCalls: ScriptedToolCall[] = calls.map((call) => ({
      id: this.nextId(),
      name: call.tool,
      arguments: call.args,
    }));
    return {
      kind: 'reply',
      ...(step.text !== undefined ? { text: step.text } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(step.delayMs !== undefined ? { delayMs: step.delayMs } : {}),
      usage: { inputTokens: 1200 + index * 300, outputTokens: 80, cacheReadTokens: index > 0 ? 900 : 0 },
    };
  };
}

/** Shorthands for the calls real models make. */
export const call = {
  read: (path: string, extra: Record<string, unknown> = {}): Call => ({
    tool: 'read_file',
    args: { path, ...extra },
  }),
  run: (command: string, extra: Record<string, unknown> = {}): Call => ({
    tool: 'run_command',
    args: { command, ...extra },
  }),
  edit: (path: string, oldString: string, newString: string, extra: Record<string, unknown> = {}): Call => ({
    tool: 'edit_file',
    args: { path, old_string: oldString, new_string: newString, ...extra },
  }),
  write: (path: string, content: string): Call => ({ tool: 'write_file', args: { path, content } }),
  list: (path: string): Call => ({ tool: 'list_dir', args: { path } }),
  glob: (pattern: string): Call => ({ tool: 'glob', args: { pattern } }),
  grep: (pattern: string, extra: Record<string, unknown> = {}): Call => ({
    tool: 'grep',
    args: { pattern, ...extra },
  }),
};
