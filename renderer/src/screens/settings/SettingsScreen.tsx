import { useEffect, useState, type FormEvent, type JSX } from 'react';
import type { SettingsValue } from '../../../../main/ipc/contract.js';
import type { ProviderKind } from '../../api/types.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useApp } from '../../appContext.js';
import { LoadingState } from '../../components/States.js';
import { ProviderCard } from './ProviderCard.js';
import { MODEL_PROVIDERS, PROVIDERS } from './providers.js';
import { LocalModelField } from '../newSession/LocalModelField.js';
import { ImportHistory } from './ImportHistory.js';
import { McpServers } from './McpServers.js';
import { McpServerEditor } from './McpServerEditor.js';
import { ProjectSetup } from './ProjectSetup.js';
import { SandboxStatus } from './SandboxStatus.js';
import { CheckoutStorage } from './CheckoutStorage.js';
import { NotificationChoices } from '../../notifications/NotificationChoices.js';
import { ThemeChoice } from '../../components/ThemeChoice.js';
import { EndpointsEditor } from './EndpointsEditor.js';
import { ModelPicker } from '../newSession/ModelPicker.js';
import { useEndpointModels } from '../newSession/useEndpointModels.js';

/** Settings: providers (keys set-only, base URLs, test connection), default model, compaction threshold, MCP servers, sandbox status. */
export function SettingsScreen(): JSX.Element {
  const { settings, reloadSettings, applySettings } = useApp();
  const [draft, setDraft] = useState<SettingsValue | undefined>(settings?.settings);
  const [saving, setSaving] = useState(false);
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();

  useEffect(() => {
    if (settings && !draft) setDraft(settings.settings);
  }, [settings, draft]);
  // Issue #37: the default OpenAI-compatible model is picked from what its server lists.
  const endpointModels = useEndpointModels(
    draft?.defaults.provider === 'openai-compatible'
      ? (draft.defaults.baseUrl ?? draft.providers['openai-compatible']?.baseUrl ?? '')
      : '',
  );

  if (!settings || !draft) return <LoadingState label="Loading settings…" />;

  const setBaseUrl = (kind: ProviderKind, baseUrl: string) =>
    setDraft({
      ...draft,
      providers: { ...draft.providers, [kind]: baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {} },
    });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setMessage(undefined);
    try {
      // The theme is saved as it is chosen: the file's (main's last word) goes with the form.
      const saved = await call(
        keel().settings.set({
          settings: {
            ...draft,
            endpoints: (draft.endpoints ?? []).map((entry) => ({
              name: entry.name.trim(),
              baseUrl: entry.baseUrl.trim(),
            })),
            ...(settings.settings.appearance ? { appearance: settings.settings.appearance } : {}),
            // The checkout kind is saved by its own choice (Checkout storage): the file's is kept.
            ...(draft.checkouts ? { checkouts: withoutKind(draft.checkouts) } : {}),
          },
        }),
      );
      setDraft(saved.settings);
      applySettings(saved);
      setMessage({ kind: 'ok', text: 'Settings saved.' });
    } catch (error) {
      setMessage({ kind: 'error', text: describeError(error) });
    } finally {
      setSaving(false);
    }
  };

  const threshold = Math.round(draft.compaction.threshold * 100);
  const defaults = draft.defaults;
  const setDefaultModel = (model: string) => {
    const { model: _old, ...rest } = defaults;
    setDraft({ ...draft, defaults: model ? { ...rest, model } : rest });
  };

  return (
    <section className="settings" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <form className="form" onSubmit={(event) => void save(event)}>
        <h2>Providers</h2>
        <p className="hint">
          {settings.keyStorage === 'keychain'
            ? 'API keys are kept in your system keychain. They are never shown again once saved.'
            : settings.keyStorage === 'file'
              ? 'keel serve keeps the API keys you save here encrypted in its home (keys.json, under a key only your user can read), across restarts; never shown again; used before the environment’s (ANTHROPIC_API_KEY, OPENAI_API_KEY, KEEL_OPENAI_COMPATIBLE_API_KEY).'
              : 'API keys come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, KEEL_OPENAI_COMPATIBLE_API_KEY): set them before starting Keel.'}
        </p>
        <div className="provider-cards">
          {PROVIDERS.map((provider) => (
            <ProviderCard
              key={provider.kind}
              provider={provider}
              keySet={settings.keys[provider.keyName]}
              keyStorage={settings.keyStorage}
              baseUrl={draft.providers[provider.kind]?.baseUrl ?? ''}
              onBaseUrl={(value) => setBaseUrl(provider.kind, value)}
              defaultModel={defaults.provider === provider.kind ? defaults.model : undefined}
              onKeysChanged={reloadSettings}
            />
          ))}
        </div>
        <EndpointsEditor
          endpoints={draft.endpoints ?? []}
          onChange={(endpoints) => setDraft({ ...draft, endpoints })}
          endpointKeys={settings.endpointKeys}
          keysWritable={settings.keyStorage !== 'environment'}
          onKeysChanged={reloadSettings}
        />

        <h2>Defaults for new sessions</h2>
        <div className="field-grid">
          <div className="field">
            <label htmlFor="set-provider">Default provider</label>
            <select
              id="set-provider"
              value={defaults.provider ?? ''}
              onChange={(event) => {
                const { provider: _old, ...rest } = defaults;
                setDraft({
                  ...draft,
                  defaults: event.target.value
                    ? { ...rest, provider: event.target.value as ProviderKind }
                    : rest,
                });
              }}
            >
              <option value="">None</option>
              {MODEL_PROVIDERS.map((provider) => (
                <option key={provider.kind} value={provider.kind}>
                  {provider.label}
                </option>
              ))}
            </select>
          </div>
          {defaults.provider === 'openai-compatible' ? (
            <ModelPicker
              idPrefix="set"
              label="Default model"
              listed={endpointModels}
              model={defaults.model ?? ''}
              onModel={setDefaultModel}
            />
          ) : defaults.provider === 'local' ? (
            <LocalModelField idPrefix="set" model={defaults.model ?? ''} onModel={setDefaultModel} />
          ) : (
            <div className="field">
              <label htmlFor="set-model">Default model</label>
              <input
                id="set-model"
                value={defaults.model ?? ''}
                spellCheck={false}
                onChange={(event) => setDefaultModel(event.target.value)}
              />
            </div>
          )}
        </div>

        <h2>Appearance</h2>
        <ThemeChoice />

        <h2>Compaction</h2>
        <div className="field">
          <label htmlFor="set-threshold">Compact when the context is this full: {threshold}%</label>
          <input
            id="set-threshold"
            type="range"
            min={0}
            max={95}
            step={5}
            value={threshold}
            onChange={(event) =>
              setDraft({
                ...draft,
                compaction: { ...draft.compaction, threshold: Number(event.target.value) / 100 },
              })
            }
          />
          <p className="hint">
            {threshold === 0
              ? 'Automatic compaction is off: long sessions will fail once they fill the window.'
              : 'Before a request would pass this share of the model’s window, older events are summarized (they stay in the log).'}
          </p>
        </div>

        <h2>Notifications</h2>
        <NotificationChoices
          value={draft.notifications}
          onChange={(notifications) => setDraft({ ...draft, notifications })}
        />

        {message ? (
          <p
            className={message.kind === 'ok' ? 'form-ok' : 'form-error'}
            role={message.kind === 'ok' ? 'status' : 'alert'}
          >
            {message.text}
          </p>
        ) : null}
        <div className="form-actions">
          <button type="submit" className="button-primary" disabled={saving}>
            {saving ? 'Saving…' : 'Save settings'}
          </button>
        </div>
      </form>
      <McpServers />
      {/* Issue 33: add, edit, remove the settings' servers; sign in / out. */}
      <McpServerEditor />
      <ImportHistory />
      <ProjectSetup />
      <CheckoutStorage />
      <SandboxStatus />
    </section>
  );
}

/** The checkouts settings the form sends: the bound, not the kind (absent: main keeps the file's). */
function withoutKind(
  checkouts: NonNullable<SettingsValue['checkouts']>,
): NonNullable<SettingsValue['checkouts']> {
  const { kind: _kind, ...bound } = checkouts;
  return bound;
}
