import type { JSX } from 'react';
import type { ProviderKind } from '../../api/types.js';
import { formatWindow, lifecycleBadge, type CatalogueModel } from './modelLifecycle.js';
import { modelsListFailure, refreshModels, useCatalogue } from './useCatalogue.js';
import './newSession.css';

const NAMES: Partial<Record<ProviderKind, string>> = { anthropic: 'Anthropic', openai: 'OpenAI' };

/** Where the list comes from: the provider's own list and its age, or why it could not be read. */
function ListSource({ provider }: { provider: ProviderKind }): JSX.Element | null {
  const catalogue = useCatalogue().data;
  const name = NAMES[provider];
  if (!catalogue || !name) return null;
  const served = catalogue.served.find((entry) => entry.provider === provider);
  const failure = modelsListFailure(provider);
  return (
    <p className="model-list-source" role="note" aria-label="Model list source">
      {served
        ? `${name} lists ${served.count} model${served.count === 1 ? '' : 's'} · checked ${served.age}`
        : `${name}'s list was not read yet: Keel's catalogue is shown`}
      {failure ? <span className="model-list-failure"> · could not check: {failure}</span> : null}{' '}
      <button type="button" className="link-button" onClick={() => void refreshModels(provider)}>
        Refresh
      </button>
    </p>
  );
}

/**
 * The catalogue models a person can pick, one radio each, with its window and what to know before pinning
 * it: suggested, legacy / retires in N days / deprecated, and whether Keel can price it. `models` comes
 * from modelChoices (retired ones already left out, current first).
 */
export function ModelList({
  name,
  label,
  provider,
  models,
  selected,
  suggested,
  today,
  onPick,
}: {
  /** The radio group's name (unique in the page). */
  name: string;
  label: string;
  /** Whose list it is: its models endpoint's age is shown above it. */
  provider: ProviderKind;
  models: readonly CatalogueModel[];
  selected: string;
  suggested: string | undefined;
  /** YYYY-MM-DD (UTC) the badges count days from. */
  today: string;
  onPick: (id: string) => void;
}): JSX.Element | null {
  if (models.length === 0) return null;
  return (
    <>
      <ListSource provider={provider} />
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
                <span
                  className="tag"
                  title="Its price is not documented: Keel shows its cost as unknown (—)."
                >
                  cost unknown
                </span>
              )}
            </label>
          );
        })}
      </div>
    </>
  );
}
