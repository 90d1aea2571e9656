import { useState, type JSX } from 'react';
import type { QueryState } from '../../api/useQuery.js';
import type { EndpointModels } from './useEndpointModels.js';

const OTHER = '\u0000other';

/**
 * Issue #37: an OpenAI-compatible endpoint's model, chosen from the list its server gives (read by main). The
 * select is labelled "Model"; "Other model…" (and a server that lists nothing, or cannot be asked) gives a
 * field to type the id. Reusable: the New session dialog uses it, the model switch can (`idPrefix` keeps two
 * forms apart); the caller reads the list with `useEndpointModels(baseUrl)` (its windows serve it too).
 */
export function ModelPicker({
  idPrefix,
  listed,
  model,
  onModel,
  label = 'Model',
}: {
  idPrefix: string;
  /** The select's label (the typed field's when the server lists nothing). */
  label?: string;
  /** The endpoint's list, from `useEndpointModels(baseUrl)`. */
  listed: QueryState<EndpointModels | undefined>;
  model: string;
  onModel: (model: string) => void;
}): JSX.Element {
  const models = listed.data?.models ?? [];
  const [typing, setTyping] = useState(false);
  const inList = models.some((entry) => entry.id === model);
  // A typed id stays typed; a model the list lacks (a default from settings) is shown as typed too.
  const showField = models.length === 0 || typing || (model !== '' && !inList);
  const status = listed.loading
    ? 'Reading the server’s models…'
    : listed.error
      ? `The server’s models could not be read: ${listed.error}. Type the model id.`
      : listed.data && models.length === 0
        ? 'The server lists no models: type the model id.'
        : undefined;
  return (
    <div className="field model-picker">
      {models.length > 0 ? (
        <>
          <label htmlFor={`${idPrefix}-model`}>{label}</label>
          <select
            id={`${idPrefix}-model`}
            value={showField ? OTHER : model}
            onChange={(event) => {
              const value = event.target.value;
              setTyping(value === OTHER);
              onModel(value === OTHER ? '' : value);
            }}
          >
            {models.map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.id}
              </option>
            ))}
            <option value={OTHER}>Other model…</option>
          </select>
          <p className="hint">
            {models.length} model{models.length === 1 ? '' : 's'} listed by the server (
            {listed.data?.served.age}).
          </p>
        </>
      ) : null}
      {showField ? (
        <>
          <label htmlFor={`${idPrefix}-model-id`}>{models.length > 0 ? `${label} id` : label}</label>
          <input
            id={`${idPrefix}-model-id`}
            value={model}
            onChange={(event) => onModel(event.target.value)}
            placeholder="model id, e.g. qwen3-coder:30b"
            spellCheck={false}
            required
          />
        </>
      ) : null}
      {status ? (
        <p className="hint" role="status">
          {status}
        </p>
      ) : null}
    </div>
  );
}
