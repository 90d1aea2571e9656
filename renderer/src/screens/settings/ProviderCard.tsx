import { useEffect, useState, type JSX } from 'react';
import type { SettingsView } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useCatalogue } from '../newSession/useCatalogue.js';
import type { PROVIDERS } from './providers.js';

type Props = {
  provider: (typeof PROVIDERS)[number];
  keySet: boolean;
  keyStorage: SettingsView['keyStorage'];
  baseUrl: string;
  onBaseUrl: (value: string) => void;
  defaultModel: string | undefined;
  onKeysChanged: () => void;
};

/** One provider: whether its key is set (never the key), a set-only key field, its base URL and a connection test. */
export function ProviderCard({
  provider,
  keySet,
  keyStorage,
  baseUrl,
  onBaseUrl,
  defaultModel,
  onKeysChanged,
}: Props): JSX.Element {
  const [key, setKey] = useState('');
  // The catalogue's suggestion is a current model: a test with a retired one would only report a 404.
  const suggested = useCatalogue().data?.suggested[provider.kind];
  const [testModel, setTestModel] = useState(defaultModel ?? '');
  const [testModelTyped, setTestModelTyped] = useState(false);
  useEffect(() => {
    if (!testModelTyped && testModel === '' && suggested !== undefined) setTestModel(suggested);
  }, [testModelTyped, testModel, suggested]);
  const [status, setStatus] = useState<{ kind: 'ok' | 'error' | 'busy'; text: string } | undefined>();
  const id = `provider-${provider.kind}`;
  const keysWritable = keyStorage !== 'environment';

  const saveKey = async (value: string | null) => {
    setStatus({ kind: 'busy', text: value === null ? 'Removing key…' : 'Saving key…' });
    try {
      await call(keel().settings.set({ keys: { [provider.keyName]: value } }));
      setKey('');
      onKeysChanged();
      setStatus({ kind: 'ok', text: value === null ? 'Key removed.' : 'Key saved.' });
    } catch (error) {
      setStatus({ kind: 'error', text: describeError(error) });
    }
  };

  const test = async () => {
    if (!testModel.trim()) {
      setStatus({ kind: 'error', text: 'Enter a model to test with.' });
      return;
    }
    setStatus({ kind: 'busy', text: 'Testing…' });
    try {
      const result = await call(
        keel().settings.testProvider({
          provider: provider.kind,
          model: testModel.trim(),
          ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}),
          ...(key.trim() ? { apiKey: key.trim() } : {}),
        }),
      );
      setStatus({
        kind: result.ok ? 'ok' : 'error',
        text: `${result.message} (${Math.round(result.latencyMs)} ms)`,
      });
    } catch (error) {
      setStatus({ kind: 'error', text: describeError(error) });
    }
  };

  return (
    <fieldset className="provider-card" aria-labelledby={`${id}-name`}>
      <legend id={`${id}-name`}>
        {provider.label}{' '}
        <span className={`tag ${keySet ? 'tag-ok' : ''}`}>{keySet ? 'key set' : 'no key'}</span>
      </legend>
      <div className="field">
        <label htmlFor={`${id}-key`}>{keySet ? 'Replace API key' : 'API key'}</label>
        <div className="field-row">
          <input
            id={`${id}-key`}
            type="password"
            autoComplete="off"
            value={key}
            onChange={(event) => setKey(event.target.value)}
            placeholder={
              keysWritable ? (keySet ? '•••••••• (hidden)' : 'paste the key') : `set ${provider.keyEnv}`
            }
            disabled={!keysWritable && keySet}
          />
          {keysWritable ? (
            <>
              <button
                type="button"
                className="button-secondary"
                disabled={!key.trim()}
                onClick={() => void saveKey(key.trim())}
              >
                Save key
              </button>
              {keySet ? (
                <button type="button" className="link-button" onClick={() => void saveKey(null)}>
                  Remove
                </button>
              ) : null}
            </>
          ) : null}
        </div>
        {!keysWritable ? (
          <p className="hint">
            From the environment: <code>{provider.keyEnv}</code>
            {keySet ? ' is set.' : ' is not set.'} A key typed here is used only for the test below.
          </p>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor={`${id}-url`}>
          Base URL{provider.kind === 'openai-compatible' ? '' : ' (optional)'}
        </label>
        <input
          id={`${id}-url`}
          type="url"
          value={baseUrl}
          spellCheck={false}
          onChange={(event) => onBaseUrl(event.target.value)}
          placeholder={provider.kind === 'openai-compatible' ? 'http://127.0.0.1:11434/v1' : 'default'}
        />
      </div>
      <div className="field-row">
        <label className="visually-hidden" htmlFor={`${id}-test-model`}>
          Model to test {provider.label} with
        </label>
        <input
          id={`${id}-test-model`}
          value={testModel}
          spellCheck={false}
          onChange={(event) => {
            setTestModel(event.target.value);
            setTestModelTyped(true);
          }}
          placeholder="model to test with"
        />
        <button
          type="button"
          className="button-secondary"
          onClick={() => void test()}
          disabled={status?.kind === 'busy'}
        >
          Test connection
        </button>
      </div>
      {status ? (
        <p
          className={status.kind === 'ok' ? 'form-ok' : status.kind === 'error' ? 'form-error' : 'hint'}
          role={status.kind === 'error' ? 'alert' : 'status'}
        >
          {status.text}
        </p>
      ) : null}
    </fieldset>
  );
}
