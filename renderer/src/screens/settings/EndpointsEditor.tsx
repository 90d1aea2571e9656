import { useState, type JSX } from 'react';
import { endpointKeyOf, type SettingsValue } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type Endpoint = NonNullable<SettingsValue['endpoints']>[number];
type Status = { kind: 'ok' | 'error' | 'busy'; text: string };

/** The status line under a row (List models, Save key). */
function StatusLine({ status }: { status: Status | undefined }): JSX.Element | null {
  if (!status) return null;
  return (
    <p
      className={status.kind === 'ok' ? 'form-ok' : status.kind === 'error' ? 'form-error' : 'hint'}
      role={status.kind === 'error' ? 'alert' : 'status'}
    >
      {status.text}
    </p>
  );
}

/**
 * Issue #37: an endpoint's own API key, set-only like the providers' (never shown back), saved at once under the
 * endpoint's base URL: sent only to that server; without one the endpoint uses the shared OpenAI-compatible key.
 */
function EndpointKey({
  id,
  endpoint,
  keySet,
  onKeysChanged,
}: {
  id: string;
  endpoint: Endpoint;
  keySet: boolean;
  onKeysChanged: () => void;
}): JSX.Element {
  const [key, setKey] = useState('');
  const [status, setStatus] = useState<Status | undefined>();
  const baseUrl = endpoint.baseUrl.trim();
  const save = async (value: string | null) => {
    setStatus({ kind: 'busy', text: value === null ? 'Removing key…' : 'Saving key…' });
    try {
      await call(keel().settings.set({ keys: { endpoints: { [baseUrl]: value } } }));
      setKey('');
      onKeysChanged();
      setStatus({ kind: 'ok', text: value === null ? 'Key removed.' : 'Key saved.' });
    } catch (error) {
      setStatus({ kind: 'error', text: describeError(error) });
    }
  };
  return (
    <>
      <div className="field-row">
        <label className="visually-hidden" htmlFor={`${id}-key`}>
          Endpoint API key
        </label>
        <input
          id={`${id}-key`}
          type="password"
          autoComplete="off"
          value={key}
          placeholder={keySet ? '•••••••• (hidden): type to replace' : 'its own API key (optional)'}
          onChange={(event) => setKey(event.target.value)}
        />
        <button
          type="button"
          className="button-secondary"
          disabled={!key.trim() || !baseUrl}
          onClick={() => void save(key.trim())}
        >
          Save key
        </button>
        {keySet ? (
          <button type="button" className="link-button" onClick={() => void save(null)}>
            Remove key
          </button>
        ) : null}
        <span className={`tag ${keySet ? 'tag-ok' : ''}`}>{keySet ? 'own key set' : 'shared key'}</span>
      </div>
      <StatusLine status={status} />
    </>
  );
}

/** One endpoint's row: name, base URL, the models its server lists (read by main on demand), Remove. */
function EndpointRow({
  index,
  endpoint,
  onChange,
  onRemove,
  keySet,
  keysWritable,
  onKeysChanged,
}: {
  index: number;
  endpoint: Endpoint;
  onChange: (endpoint: Endpoint) => void;
  onRemove: () => void;
  keySet: boolean;
  keysWritable: boolean;
  onKeysChanged: () => void;
}): JSX.Element {
  const [models, setModels] = useState<Status | undefined>();
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
      <StatusLine status={models} />
      {keysWritable ? (
        <EndpointKey id={id} endpoint={endpoint} keySet={keySet} onKeysChanged={onKeysChanged} />
      ) : null}
    </li>
  );
}

/**
 * Issue #37: the named OpenAI-compatible endpoints (Ollama, LM Studio, vLLM, a gateway), edited in the settings
 * form and saved with it; each can list its server's models (through main) and have its own key (saved at once,
 * by base URL); without one it uses the OpenAI-compatible key above.
 */
export function EndpointsEditor({
  endpoints,
  onChange,
  endpointKeys,
  keysWritable,
  onKeysChanged,
}: {
  endpoints: readonly Endpoint[];
  onChange: (endpoints: Endpoint[]) => void;
  /** The base URLs (endpointKeyOf) with a key of their own. */
  endpointKeys: readonly string[];
  keysWritable: boolean;
  onKeysChanged: () => void;
}): JSX.Element {
  return (
    <div className="endpoints">
      <h3>OpenAI-compatible endpoints</h3>
      <p className="hint">
        Each server is offered by name in New session, with the models it lists. A server’s own key is sent
        only to its base URL (a changed URL needs its key again); without one it uses the OpenAI-compatible
        key above.
      </p>
      <ul className="endpoint-list">
        {endpoints.map((endpoint, index) => (
          <EndpointRow
            key={index}
            index={index}
            endpoint={endpoint}
            onChange={(next) => onChange(endpoints.map((entry, at) => (at === index ? next : entry)))}
            onRemove={() => onChange(endpoints.filter((_, at) => at !== index))}
            keySet={endpointKeys.includes(endpointKeyOf(endpoint.baseUrl))}
            keysWritable={keysWritable}
            onKeysChanged={onKeysChanged}
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
