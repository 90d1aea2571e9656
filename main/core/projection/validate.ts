import type { Payload, PayloadMessage } from '../../common/payload.js';

/** One reason a payload would be rejected by a provider; `index` is the offending message's position. */
export type PayloadProblem = { index: number; message: string };

/** Outcome of validatePayload: problems are values, so a caller can report them instead of sending. */
export type PayloadValidation = { ok: true } | { ok: false; problems: PayloadProblem[] };

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * Checks a payload against the rules both OpenAI and Anthropic enforce: known roles, system messages
 * only at the start, the conversation opens with a user message, user/assistant text is not blank,
 * tool-call ids are unique, and every assistant tool call is answered exactly once by the tool
 * messages immediately following it, with no other tool message anywhere; reasoning only on assistant
 * messages, each part within the message's calls and every thinking block signed; an environment block is
 * not blank. Pure; O(messages).
 */
export function validatePayload(payload: Payload): PayloadValidation {
  const cursor: ValidationCursor = {
    index: 0,
    seenCallIds: new Set(),
    conversationStarted: false,
    problems: [],
  };
  if (!Array.isArray(payload.messages))
    cursor.problems.push({ index: -1, message: 'payload.messages is not an array' });
  const messages: readonly PayloadMessage[] = Array.isArray(payload.messages) ? payload.messages : [];
  continueValidation(messages, cursor);
  const problems = cursor.problems;
  // Sent as user text after everything else: blank text is what Anthropic rejects.
  if (payload.environment !== undefined && payload.environment.trim() === '') {
    problems.push({
      index: messages.length,
      message: 'the environment block is blank (Anthropic rejects blank text)',
    });
  }
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}

/**
 * Where a check of a growing message list stopped: the next message to check (always the start of a
 * message group: a message and the tool messages answering its calls), the call ids seen, whether the
 * conversation has started, and the problems found so far.
 */
export type ValidationCursor = {
  index: number;
  seenCallIds: Set<string>;
  conversationStarted: boolean;
  problems: PayloadProblem[];
};

/**
 * Checks `messages` from `cursor.index` to the end with validatePayload's message rules, advancing the cursor
 * (a list that only grows, group by group, is then checked once per message). O(new messages).
 */
export function continueValidation(messages: readonly PayloadMessage[], cursor: ValidationCursor): void {
  const report = (index: number, message: string): void => {
    cursor.problems.push({ index, message });
  };
  const seenCallIds = cursor.seenCallIds;
  let i = cursor.index;
  while (i < messages.length) {
    const message = messages[i];
    if (message === undefined) break;
    checkShape(message, i, report);

    if (message.role === 'system') {
      if (cursor.conversationStarted) report(i, 'a system message after the conversation started');
      i++;
      continue;
    }
    if (!cursor.conversationStarted && message.role !== 'user') {
      report(i, `the first non-system message is ${message.role}, providers require user`);
    }
    cursor.conversationStarted = true;

    if (message.role === 'tool') {
      report(i, `tool message for ${message.toolCallId ?? '(no id)'} does not follow the call it answers`);
      i++;
      continue;
    }
    const calls = message.role === 'assistant' ? (message.toolCalls ?? []) : [];
    i++;
    if (calls.length === 0) continue;

    const pending = new Set<string>();
    for (const call of calls) {
      if (seenCallIds.has(call.id)) report(i - 1, `tool call id ${call.id} is used more than once`);
      seenCallIds.add(call.id);
      pending.add(call.id);
    }
    // Exactly the next `pending.size` messages must be this message's results, nothing in between.
    while (pending.size > 0) {
      const next = messages[i];
      if (next === undefined || next.role !== 'tool') {
        const where = next === undefined ? 'the payload ends' : `a ${next.role} message comes`;
        report(i, `tool call(s) ${[...pending].join(', ')} unanswered: ${where} before their results`);
        break;
      }
      checkShape(next, i, report);
      if (next.toolCallId === undefined || !pending.has(next.toolCallId)) {
        const id = next.toolCallId ?? '(no id)';
        report(i, `tool message for ${id} answers no open call of the assistant message before it`);
      } else {
        pending.delete(next.toolCallId);
      }
      i++;
    }
  }
  cursor.index = i;
}

function checkShape(message: PayloadMessage, index: number, report: (i: number, m: string) => void): void {
  if (!ROLES.has(message.role)) report(index, `unknown role ${String(message.role)}`);
  if (typeof message.content !== 'string') report(index, 'content is not a string');
  if (message.toolCalls !== undefined) {
    if (message.role !== 'assistant') report(index, `a ${message.role} message carries tool calls`);
    if (message.toolCalls.length === 0) report(index, 'toolCalls is present but empty (OpenAI rejects it)');
    for (const call of message.toolCalls) {
      if (call.id === '') report(index, `tool call ${call.name} has an empty id`);
    }
  }
  if (message.role === 'tool' && (message.toolCallId === undefined || message.toolCallId === '')) {
    report(index, 'a tool message without toolCallId');
  }
  if (message.reasoning !== undefined) {
    if (message.role !== 'assistant') report(index, `a ${message.role} message carries reasoning`);
    const calls = message.toolCalls?.length ?? 0;
    for (const part of message.reasoning) {
      // A part placed after more calls than the message has could not be replayed where it streamed.
      if ((part.afterCalls ?? 0) > calls)
        report(index, `a reasoning part sits after call ${part.afterCalls} of ${calls}`);
      if (part.type === 'thinking' && part.signature === '') {
        report(index, 'a thinking block without its signature (Anthropic rejects it)');
      }
    }
  }
  if (message.role !== 'tool' && message.toolCallId !== undefined) {
    report(index, `a ${message.role} message carries toolCallId`);
  }
  const hasCalls = (message.toolCalls?.length ?? 0) > 0;
  // A user message with attached files has blocks of its own: providers leave its empty text out.
  const needsText =
    (message.role === 'user' && !message.attachments?.length) || (message.role === 'assistant' && !hasCalls);
  if (needsText && typeof message.content === 'string' && message.content.trim() === '') {
    report(index, `${message.role} message has blank content (Anthropic rejects it)`);
  }
}
