import type { ModelPin, ReasoningEffort } from '../../common/events.js';
import { effectiveEffort, reasoningChoices } from '../../providers/reasoning.js';

/**
 * What a model switch asks of the effort: absent, keep the pinned one; null, the new model's default; an
 * effort, that one (the app's switch names it).
 */
export type EffortRequest = ReasoningEffort | null | undefined;

/** The effort the switched pin carries (absent: the model's default) and a one-line warning when it fell back. */
export type EffortAfterSwitch =
  { ok: true; effort?: ReasoningEffort; warning?: string } | { ok: false; message: string };

/**
 * The one rule for the reasoning effort across a model switch (`keel model`, sessions.setModel): a pinned
 * effort the new model accepts is kept; one it refuses (off for a model that always reasons) falls back to
 * the new model's default, and the warning says so, since a silent change of how hard it thinks would
 * surprise. A pin that had no effort follows the new model's default, as it followed the old one's. An
 * effort the switch names must be one the new model accepts.
 */
export function effortAfterSwitch(
  previous: Pick<ModelPin, 'model' | 'reasoningEffort'>,
  model: string,
  requested: EffortRequest,
): EffortAfterSwitch {
  const choices = reasoningChoices(model);
  if (requested === null) return { ok: true };
  if (requested !== undefined) {
    if (choices.includes(requested)) return { ok: true, effort: requested };
    return {
      ok: false,
      message: `${model} always reasons: choose a reasoning effort of ${choices.join(', ')}`,
    };
  }
  const pinned = previous.reasoningEffort;
  if (pinned === undefined) return { ok: true };
  if (choices.includes(pinned)) return { ok: true, effort: pinned };
  const fallback = effectiveEffort(model, undefined);
  return {
    ok: true,
    warning: `${model} does not take the reasoning effort ${pinned} (it takes ${choices.join(', ')}): it reasons at ${fallback}, its default`,
  };
}
