import { useState, type JSX } from 'react';
import type { SettingsValue } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type Endpoint = NonNullable<SettingsValue['endpoints']>[number];

/** One endpoint's row: name, base URL, the models its server lists (read by main on demand), Remove. */
function EndpointRow({
  index,
  endpoint,
  onChange,
  onRemove,
}: {
  index: number;
  endpoint: Endpoint;
  onChange: (endpoint: Endpoint) => void;
  onRemove: () => void;
}): JSX.Element {
  const [models, setModels] = useState<{ kind: 'ok' | 'error' | 'busy'; text: string } | undefined>();
  const id = `endpoint-${index}`;
  const check = async () => {
    setModels({ kind: 'busy', text: 'Asking the server…' });
    try {
      const listed = await call(
        keel().providers.models({ provider: 'openai-compatible', baseUrl: endpoint.baseUrl.trim() }),
      );
      const ids = listed.models.map((model) => model.id);
      setModels({
        kind: 'ok',
        text:
          ids.length === 0
            ? 'The server answered but lists no models (type the id in New session).'
            : `${ids.length} model${ids.length === 1 ? '' : 's'}: ${ids.slice(0, 6).join(', ')}${ids.length > 6 ? ', …' : ''}`,
      });
    } catch (error) {
      setModels({ kind: 'error', text: describeError(error) });
    }
  };
  return (
    <li className="endpoint-row" aria-label={`Endpoint ${endpoint.name || index + 1}`}>
      <div className="field-row">
        <label className="visually-hidden" htmlFor={`${id}-name`}>
          Endpoint name
        </label>
        <input
          id={`${id}-name`}
          value={endpoint.name}
          placeholder="name, e.g. Ollama"
          onChange={(event) => onChange({ ...endpoint, name: event.target.value })}
        />
        <label className="visually-hidden" htmlFor={`${id}-url`}>
          Endpoint base URL
        </label>
        <input
          id={`${id}-url`}
          type="url"
          value={endpoint.baseUrl}
          spellCheck={false}
          placeholder="http://127.0.0.1:11434/v1"
          onChange={(event) => onChange({ ...endpoint, baseUrl: event.target.value })}
        />
        <button
          type="button"
          className="button-secondary"
          disabled={models?.kind === 'busy' || !endpoint.baseUrl.trim()}
          onClick={() => void check()}
        >
          List models
        </button>
        <button type="button" className="link-button" onClick={onRemove}>
          Remove
        </button>
      </div>
      {models ? (
        <p
          className={models.kind === 'ok' ? 'form-ok' : models.kind === 'error' ? 'form-error' : 'hint'}
          role={models.kind === 'error' ? 'alert' : 'status'}
        >
          {models.text}
        </p>
      ) : null}
    </li>
  );
}

/**
 * Issue #37: the named OpenAI-compatible endpoints (Ollama, LM Studio, vLLM, a gateway), edited in the settings
 * form and saved with it; each can list its server's models (through main). The key is the OpenAI-compatible
 * one above.
 */
export function EndpointsEditor({
  endpoints,
  onChange,
}: {
  endpoints: readonly Endpoint[];
  onChange: (endpoints: Endpoint[]) => void;
}): JSX.Element {
  return (
    <div className="endpoints">
      <h3>OpenAI-compatible endpoints</h3>
      <p className="hint">
        Each server is offered by name in New session, with the models it lists. They use the
        OpenAI-compatible key above.
      </p>
      <ul className="endpoint-list">
        {endpoints.map((endpoint, index) => (
          <EndpointRow
            key={index}
            index={index}
            endpoint={endpoint}
            onChange={(next) => onChange(endpoints.map((entry, at) => (at === index ? next : entry)))}
            onRemove={() => onChange(endpoints.filter((_, at) => at !== index))}
          />
        ))}
      </ul>
      <button
        type="button"
        className="button-secondary"
        onClick={() => onChange([...endpoints, { name: '', baseUrl: '' }])}
      >
        Add endpoint
      </button>
    </div>
  );
}
