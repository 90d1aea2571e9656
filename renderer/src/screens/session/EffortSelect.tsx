import type { JSX } from 'react';
import type { ModelPin } from '../../../../main/ipc/contract.js';

type ReasoningEffort = NonNullable<ModelPin['reasoningEffort']>;

/** What the switch's Reasoning field holds: an effort, or the chosen model's own default. */
export type EffortValue = ReasoningEffort | 'default';

const ALL: ReasoningEffort[] = ['off', 'low', 'medium', 'high'];

/** A model's reasoning as the catalogue gives it; a model Keel does not know takes any effort, default off. */
export type ModelReasoning = { choices: ReasoningEffort[]; defaultEffort: ReasoningEffort };
export const UNKNOWN_REASONING: ModelReasoning = { choices: ALL, defaultEffort: 'off' };

/**
 * The effort the field shows for a model: the one held when the model takes it, else the model's default
 * (a model that always reasons offers no "off"), as main's rule for a switch does (core/models/effort.ts).
 */
export function shownEffort(value: EffortValue, reasoning: ModelReasoning): EffortValue {
  return value !== 'default' && !reasoning.choices.includes(value) ? 'default' : value;
}

/** The model switch's Reasoning field: only the efforts the chosen model takes, and why one is missing. */
export function EffortSelect({
  model,
  value,
  reasoning,
  onChange,
}: {
  model: string;
  value: EffortValue;
  reasoning: ModelReasoning;
  onChange: (value: EffortValue) => void;
}): JSX.Element {
  const shown = shownEffort(value, reasoning);
  const fellBack = shown !== value;
  return (
    <div className="field">
      <label htmlFor="ms-reasoning">Reasoning</label>
      <select
        id="ms-reasoning"
        value={shown}
        onChange={(event) => onChange(event.target.value as EffortValue)}
      >
        <option value="default">Model&apos;s default ({reasoning.defaultEffort})</option>
        {reasoning.choices.map((effort) => (
          <option key={effort} value={effort}>
            {effort === 'off' ? 'Off' : effort[0]?.toUpperCase() + effort.slice(1)}
          </option>
        ))}
      </select>
      <p className="hint" role={fellBack ? 'status' : undefined}>
        {fellBack
          ? `${model || 'This model'} does not take the effort ${value}: it reasons at its default (${reasoning.defaultEffort}).`
          : 'How hard the model thinks; the pinned effort is kept when the new model takes it.'}
      </p>
    </div>
  );
}
