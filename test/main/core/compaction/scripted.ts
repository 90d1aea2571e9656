import { SUMMARY_SYSTEM_PROMPT } from '../../../../main/core/compaction/summarize.js';
import {
  withoutEnvironment,
  type RecordedRequest,
  type ScriptStep,
} from '../../../support/providerServer.js';
import { chatShapeOf, referenceRequestTokens, referenceTextTokens } from './reference.js';

/** The wire messages of a recorded OpenAI request. */
export type WireMessages = { role: string; content: string | null; tool_call_id?: string }[];

/** The messages of a recorded request body (a Responses body's input items in chat shape). */
export function messagesOf(request: RecordedRequest): WireMessages {
  return chatShapeOf(request.body).messages as WireMessages;
}

/** The conversation a recorded request carries: its messages without Keel's trailing environment block. */
export function conversationOf(request: RecordedRequest): WireMessages {
  return withoutEnvironment(messagesOf(request));
}

/** True for a summary request: its system text is the fixed summarizer prompt. */
export function isSummaryRequest(request: RecordedRequest): boolean {
  return messagesOf(request)[0]?.content === SUMMARY_SYSTEM_PROMPT;
}

let nonce = 0;

/**
 * What a diligent summarizer would write for a summary request, built from the request's own input:
 * the objective quoted between <<< and >>>, every "CONSTRAINT: …." and "DECISION: …." phrase it saw
 * (in the transcript or in partial summaries), the event range, and a unique id so a test can tell
 * this summary apart from any other (and spot it if it is ever fed back as input).
 */
export function summaryFor(request: RecordedRequest): string {
  const input = messagesOf(request)[1]?.content ?? '';
  const objective = /<<<\n([\s\S]*?)\n>>>/.exec(input)?.[1] ?? '';
  const phrases = (label: string) => [
    ...new Set(input.match(new RegExp(`${label}: [^.\\n]*\\.`, 'g')) ?? []),
  ];
  const range = /events #(\d+)–#(\d+)/i.exec(input);
  nonce++;
  return [
    '## Objective',
    `"${objective}"`,
    '## Constraints',
    ...phrases('CONSTRAINT'),
    '## Decisions',
    ...phrases('DECISION'),
    '## Work done',
    `Read the files the user named (summary-id S${nonce}).`,
    '## In flight',
    'Answering the latest question.',
    '## Handles',
    range ? `events #${range[1]}–#${range[2]}` : 'events: none',
  ].join('\n');
}

/** A reply step whose usage is what a provider would report for this request (reference.ts). */
export function replyWithUsage(
  request: RecordedRequest,
  step: { text?: string; toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[] },
): ScriptStep {
  const output =
    (step.text ?? '') +
    (step.toolCalls ?? []).map((call) => call.name + JSON.stringify(call.arguments)).join('');
  return {
    kind: 'reply',
    ...step,
    usage: { inputTokens: referenceRequestTokens(request.body), outputTokens: referenceTextTokens(output) },
  };
}
