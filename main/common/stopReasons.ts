import { z } from 'zod';

/** What a provider said about why it stopped, beyond the stop reason (Anthropic's `stop_details` for a refusal). */
export const StopDetails = z.object({
  type: z.string().max(100).optional(),
  category: z.string().max(200).nullable().optional(),
  explanation: z.string().max(20_000).nullable().optional(),
});
export type StopDetails = z.infer<typeof StopDetails>;

/**
 * An ending a person must be told about: the model declined (`refusal`), a content filter cut the reply, the
 * reply hit its output limit, the request its context window, the provider paused the turn, or a hook ended it.
 */
export type UnusualStop = {
  /** `hook`: a user's hook ended the turn (`continue: false`, issue #30); the message carries its stopReason. */
  kind: 'refusal' | 'content_filter' | 'output_limit' | 'context_limit' | 'paused' | 'hook';
  /** One sentence for the transcript and `keel run`, with the provider's own explanation when it gave one. */
  message: string;
};

/**
 * Each provider's stop reasons that are not an ordinary end, by the words the providers use: Anthropic
 * (`refusal`, `max_tokens`, `pause_turn`, `model_context_window_exceeded`), chat completions (`length`,
 * `content_filter`) and the Responses API's incomplete reasons (`max_output_tokens`, `content_filter`).
 */
const UNUSUAL: Readonly<Record<string, UnusualStop['kind']>> = {
  refusal: 'refusal',
  content_filter: 'content_filter',
  max_tokens: 'output_limit',
  length: 'output_limit',
  max_output_tokens: 'output_limit',
  model_context_window_exceeded: 'context_limit',
  pause_turn: 'paused',
};

/** The notice a stop reason calls for, or undefined for an ordinary end (end_turn, stop, tool calls). */
export function unusualStop(stopReason: string | undefined, details?: StopDetails): UnusualStop | undefined {
  const kind = stopReason === undefined ? undefined : UNUSUAL[stopReason];
  if (kind === undefined) return undefined;
  // The provider's sentence, without its own full stop: each message below ends the sentence itself.
  const explanation = details?.explanation?.trim().replace(/[.!]+$/, '');
  const category = details?.category ? ` (${details.category})` : '';
  const because = explanation ? `: ${explanation}` : '';
  switch (kind) {
    case 'refusal':
      return {
        kind,
        message:
          `The model declined to continue${category}${because}. ` +
          'Rephrase the request, or rewind to before it: continuing the same conversation tends to be refused again.',
      };
    case 'content_filter':
      return { kind, message: `The provider's content filter stopped the reply${because}.` };
    case 'output_limit':
      return {
        kind,
        message:
          "The reply was cut off at the model's output limit. Ask it to continue, or to do the work in smaller steps.",
      };
    case 'context_limit':
      return {
        kind,
        message:
          "The reply stopped because the conversation filled the model's context window. Compact the session.",
      };
    case 'paused':
      return {
        kind,
        message:
          'The provider paused the turn (a server tool was still working). Keel continues a paused turn a few ' +
          'times on its own; resume to let it go on.',
      };
  }
}
