import type { JSX, ReactNode } from 'react';
import type { ProviderKind } from '../../api/types.js';
import { PROVIDERS } from '../settings/providers.js';
import { formatWindow, lifecycleBadge, type CatalogueModel } from './modelLifecycle.js';

/**
 * The provider select and the model field that the New session dialog and the model switch both show:
 * `idPrefix` keeps two forms on screen apart; with `suggestions` the field offers those models as a datalist
 * (window and lifecycle badge beside each).
 */
export function ProviderModelPicker({
  idPrefix,
  provider,
  onProvider,
  model,
  onModel,
  suggestions,
  today,
  modelField,
  providers = PROVIDERS,
}: {
  idPrefix: string;
  provider: ProviderKind;
  onProvider: (provider: ProviderKind) => void;
  model: string;
  onModel: (model: string) => void;
  /** Models offered as the field's datalist; none: a plain field. */
  suggestions?: readonly CatalogueModel[];
  /** Main's day, for the badges. */
  today: string;
  /** Issue #37: shown instead of the model field (an endpoint's ModelPicker). */
  modelField?: ReactNode;
  /** The providers offered (default: those with a key or server; the new-session dialog adds `local`). */
  providers?: readonly { kind: ProviderKind; label: string }[];
}): JSX.Element {
  const listId = suggestions ? `${idPrefix}-models` : undefined;
  return (
    <div className="field-grid">
      <div className="field">
        <label htmlFor={`${idPrefix}-provider`}>Provider</label>
        <select
          id={`${idPrefix}-provider`}
          value={provider}
          onChange={(event) => onProvider(event.target.value as ProviderKind)}
        >
          {providers.map((entry) => (
            <option key={entry.kind} value={entry.kind}>
              {entry.label}
            </option>
          ))}
        </select>
      </div>
      {modelField ?? (
        <div className="field">
          <label htmlFor={`${idPrefix}-model`}>Model</label>
          <input
            id={`${idPrefix}-model`}
            {...(listId ? { list: listId } : {})}
            value={model}
            onChange={(event) => onModel(event.target.value)}
            placeholder={suggestions?.[0]?.id ?? 'model id'}
            spellCheck={false}
            required
          />
          {suggestions ? (
            <datalist id={listId}>
              {suggestions.map((entry) => (
                <option key={entry.id} value={entry.id}>
                  {[`${formatWindow(entry.contextWindow)} context`, lifecycleBadge(entry, today)?.text]
                    .filter(Boolean)
                    .join(' · ')}
                </option>
              ))}
            </datalist>
          ) : null}
        </div>
      )}
    </div>
  );
}
