import type { JSX } from 'react';
import { formatWindow, lifecycleBadge, type CatalogueModel } from './modelLifecycle.js';
import './newSession.css';

/**
 * The catalogue models a person can pick, one radio each, with its window and what to know before pinning
 * it: suggested, legacy / retires in N days / deprecated, and whether Keel can price it. `models` comes
 * from modelChoices (retired ones already left out, current first).
 */
export function ModelList({
  name,
  label,
  models,
  selected,
  suggested,
  today,
  onPick,
}: {
  /** The radio group's name (unique in the page). */
  name: string;
  label: string;
  models: readonly CatalogueModel[];
  selected: string;
  suggested: string | undefined;
  /** YYYY-MM-DD (UTC) the badges count days from. */
  today: string;
  onPick: (id: string) => void;
}): JSX.Element | null {
  if (models.length === 0) return null;
  return (
    <div className="model-list" role="radiogroup" aria-label={label}>
      {models.map((model) => {
        const badge = lifecycleBadge(model, today);
        return (
          <label key={model.id} className="model-option" data-status={model.status}>
            <input
              type="radio"
              name={name}
              value={model.id}
              checked={selected === model.id}
              onChange={() => onPick(model.id)}
            />
            <code className="model-option-id">{model.id}</code>
            <span className="model-option-window">{formatWindow(model.contextWindow)} context</span>
            {model.id === suggested ? <span className="tag tag-ok">suggested</span> : null}
            {badge ? (
              <span
                className={`tag model-badge model-badge-${badge.tone}`}
                title={
                  model.retiresOn
                    ? `The provider stops serving it on ${model.retiresOn}${model.replacement ? `; its replacement is ${model.replacement}` : ''}.`
                    : model.replacement
                      ? `Superseded by ${model.replacement}; still served.`
                      : undefined
                }
              >
                {badge.text}
              </span>
            ) : null}
            {model.priced ? null : (
              <span className="tag" title="Its price is not documented: Keel shows its cost as unknown (—).">
                cost unknown
              </span>
            )}
          </label>
        );
      })}
    </div>
  );
}
