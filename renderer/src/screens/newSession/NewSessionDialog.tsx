import { useEffect, useMemo, useRef, useState, type FormEvent, type JSX } from 'react';
import type { ProviderKind } from '../../api/types.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useApp, type NewSessionPrefill } from '../../appContext.js';
import { MODEL_PROVIDERS, POLICIES, PROVIDERS } from '../settings/providers.js';
import { LocalModelField } from './LocalModelField.js';
import { ModelFields } from './ModelFields.js';
import { ModelList } from './ModelList.js';
import { EndpointSelect } from './EndpointSelect.js';
import { ModelPicker } from './ModelPicker.js';
import { useEndpointModels } from './useEndpointModels.js';
import { ProviderModelPicker } from './ProviderModelPicker.js';
import { findCatalogueModel, modelChoices, pinNote, switchTarget, catalogueToday } from './modelLifecycle.js';
import { RecentProjects } from './RecentProjects.js';
import { useCatalogue } from './useCatalogue.js';

/** The reasoning efforts sessions.create takes; `default` sends none (the model's own). */
const REASONING = [
  { value: 'default', label: "Model's default" },
  { value: 'off', label: 'Off (where the model allows it)' },
  { value: 'low', label: 'Low' },
  { value: 'medium', label: 'Medium' },
  { value: 'high', label: 'High' },
] as const;
type ReasoningChoice = (typeof REASONING)[number]['value'];

/** How a session's changes reach the project folder (the `checkout` of sessions.create). */
const CHANGE_MODES = [
  {
    value: 'auto',
    label: 'Apply when each turn ends',
    hint: 'The agent works on its own checkout; its changes are merged into the folder when a turn ends.',
  },
  {
    value: 'manual',
    label: 'Review, then apply',
    hint: 'The agent works on its own checkout; you review the diff in Changes and apply or discard it.',
  },
  {
    value: 'direct',
    label: 'Edit the folder directly',
    hint: 'No checkout: the agent writes into the folder itself as it works.',
  },
] as const;

type ChangeMode = (typeof CHANGE_MODES)[number]['value'];

/** The new-session form in a modal dialog: project folder, provider and model, policy, changes, network allowlist. */
export function NewSessionDialog({
  prefill,
  onClose,
}: {
  prefill: NewSessionPrefill;
  onClose: () => void;
}): JSX.Element {
  const { settings, info, navigate, reloadSettings } = useApp();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const catalogue = useCatalogue();
  const defaults = settings?.settings.defaults;
  // Settings' default model belongs to the default provider; another provider starts on its suggestion.
  const defaultModelOf = (kind: ProviderKind) => (kind === defaults?.provider ? defaults.model : undefined);
  const [folder, setFolder] = useState(prefill.projectFolder ?? '');
  const [provider, setProvider] = useState<ProviderKind>(defaults?.provider ?? 'openai-compatible');
  const [model, setModel] = useState(defaultModelOf(provider) ?? '');
  // Once the person typed or picked a model, a late catalogue no longer fills one in.
  const [modelChosen, setModelChosen] = useState(false);
  const [baseUrl, setBaseUrl] = useState(
    defaults?.baseUrl ??
      settings?.settings.providers[defaults?.provider ?? 'openai-compatible']?.baseUrl ??
      '',
  );
  const [contextWindow, setContextWindow] = useState('');
  const [policy, setPolicy] = useState(defaults?.policy ?? 'ask');
  const [network, setNetwork] = useState((defaults?.networkAllow ?? []).join('\n'));
  const [title, setTitle] = useState('');
  const [capUsd, setCapUsd] = useState('');
  const [changes, setChanges] = useState<ChangeMode>('auto');
  const [reasoning, setReasoning] = useState<ReasoningChoice>('default');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const electron = info?.mode === 'electron';

  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);

  const today = catalogueToday(catalogue.data);
  const suggested = catalogue.data?.suggested[provider];
  const models = useMemo(
    () => modelChoices(catalogue.data, provider, today),
    [catalogue.data, provider, today],
  );
  const picked = findCatalogueModel(catalogue.data, provider, model.trim());
  const note = pinNote(picked, today, picked && switchTarget(catalogue.data, provider, picked.id, today));
  // Issue #37: an OpenAI-compatible endpoint's own list (read by main), its windows where it states them.
  const compatible = provider === 'openai-compatible';
  const endpointModels = useEndpointModels(compatible ? baseUrl : '');
  const servedWindow = endpointModels.data?.models.find((entry) => entry.id === model.trim())?.contextWindow;
  const knownWindow =
    picked?.contextWindow ?? settings?.settings.contextWindows[model.trim()] ?? servedWindow;
  // A local model's window comes from its file's metadata (main pins it).
  const local = provider === 'local';
  const needsWindow = !local && model.trim() !== '' && knownWindow === undefined;

  useEffect(() => {
    if (!modelChosen && model === '' && suggested !== undefined) setModel(suggested);
  }, [modelChosen, model, suggested]);

  const chooseModel = (next: string) => {
    setModel(next);
    setModelChosen(true);
  };

  const chooseProvider = (next: ProviderKind) => {
    setProvider(next);
    setBaseUrl(
      settings?.settings.providers[next]?.baseUrl ??
        (next === defaults?.provider ? (defaults.baseUrl ?? '') : ''),
    );
    setModel(defaultModelOf(next) ?? catalogue.data?.suggested[next] ?? '');
    setModelChosen(false);
  };

  const browse = async () => {
    setError(undefined);
    try {
      const picked = await call(keel().projects.openFolder(folder.trim() ? { path: folder.trim() } : {}));
      if (picked.folder) setFolder(picked.folder);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    if (!folder.trim()) return setError('Choose the project folder the session works in.');
    if (!model.trim()) return setError('Choose a model.');
    if (provider === 'openai-compatible' && !baseUrl.trim())
      return setError('A local or self-hosted server needs its base URL, e.g. http://127.0.0.1:11434/v1.');
    const windowTokens = needsWindow ? Number(contextWindow) : undefined;
    if (needsWindow && (!Number.isInteger(windowTokens) || (windowTokens ?? 0) <= 0))
      return setError(`Keel does not know ${model.trim()}: enter its context window in tokens.`);
    const usdCap = capUsd.trim() === '' ? undefined : Number(capUsd.trim().replace(/^\$/, ''));
    if (usdCap !== undefined && !(usdCap > 0))
      return setError('A spend cap is an amount in USD above 0; leave it empty for none.');
    setBusy(true);
    try {
      // In `keel serve` the typed path is resolved (and checked) by main; in the app the dialog already did.
      const projectFolder = electron
        ? folder.trim()
        : ((await call(keel().projects.openFolder({ path: folder.trim() }))).folder ?? folder.trim());
      const created = await call(
        keel().sessions.create({
          projectFolder,
          provider,
          model: model.trim(),
          ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}),
          ...(windowTokens ? { contextWindow: windowTokens } : {}),
          policy,
          checkout: changes,
          ...(reasoning !== 'default' ? { reasoningEffort: reasoning } : {}),
          networkAllow: network
            .split(/[\s,]+/)
            .map((host) => host.trim())
            .filter(Boolean),
          ...(title.trim() ? { title: title.trim() } : {}),
          ...(usdCap !== undefined ? { budget: { usd: usdCap } } : {}),
        }),
      );
      // A window typed for an unknown model is kept by main: the next dialog knows it.
      if (windowTokens) reloadSettings();
      navigate({ screen: 'session', sessionId: created.session.id });
      onClose();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialogRef} className="dialog" aria-labelledby="new-session-title" onClose={onClose}>
      <form className="form" onSubmit={(event) => void submit(event)}>
        <h2 id="new-session-title">New session</h2>
        <div className="field">
          <label htmlFor="ns-folder">Project folder</label>
          <div className="field-row">
            <input
              id="ns-folder"
              value={folder}
              onChange={(event) => setFolder(event.target.value)}
              placeholder="/home/you/projects/app"
              spellCheck={false}
              autoFocus
              required
            />
            {electron ? (
              <button type="button" className="button-secondary" onClick={() => void browse()}>
                Choose…
              </button>
            ) : null}
          </div>
          <RecentProjects onPick={setFolder} />
        </div>
        <ProviderModelPicker
          idPrefix="ns"
          provider={provider}
          onProvider={chooseProvider}
          model={model}
          onModel={chooseModel}
          suggestions={models}
          today={today}
          providers={MODEL_PROVIDERS}
          {...(compatible
            ? {
                modelField: (
                  <ModelPicker idPrefix="ns" listed={endpointModels} model={model} onModel={chooseModel} />
                ),
              }
            : local
              ? { modelField: <LocalModelField idPrefix="ns" model={model} onModel={setModel} /> }
              : {})}
        />
        {compatible ? <EndpointSelect idPrefix="ns" baseUrl={baseUrl} onBaseUrl={setBaseUrl} /> : null}
        {models.length > 0 ? (
          <ModelList
            name="ns-model-choice"
            label={`${PROVIDERS.find((entry) => entry.kind === provider)?.label ?? provider} models`}
            provider={provider}
            models={models}
            selected={model.trim()}
            suggested={suggested}
            today={today}
            onPick={chooseModel}
          />
        ) : null}
        <ModelFields
          idPrefix="ns"
          note={note}
          provider={provider}
          baseUrl={baseUrl}
          onBaseUrl={setBaseUrl}
          needsWindow={needsWindow}
          contextWindow={contextWindow}
          onContextWindow={setContextWindow}
          windowHint="Keel does not know this model; its window sets when compaction runs."
        />
        <div className="field-grid">
          <div className="field">
            <label htmlFor="ns-policy">Approval policy</label>
            <select
              id="ns-policy"
              value={policy}
              onChange={(event) => setPolicy(event.target.value as typeof policy)}
            >
              {POLICIES.map((entry) => (
                <option key={entry.value} value={entry.value}>
                  {entry.label}
                </option>
              ))}
            </select>
            <p className="hint">{POLICIES.find((entry) => entry.value === policy)?.hint}</p>
          </div>
          <div className="field">
            <label htmlFor="ns-changes">Changes</label>
            <select
              id="ns-changes"
              value={changes}
              onChange={(event) => setChanges(event.target.value as ChangeMode)}
            >
              {CHANGE_MODES.map((entry) => (
                <option key={entry.value} value={entry.value}>
                  {entry.label}
                </option>
              ))}
            </select>
            <p className="hint">{CHANGE_MODES.find((entry) => entry.value === changes)?.hint}</p>
          </div>
          <div className="field">
            <label htmlFor="ns-reasoning">Reasoning</label>
            <select
              id="ns-reasoning"
              value={reasoning}
              onChange={(event) => setReasoning(event.target.value as ReasoningChoice)}
            >
              {REASONING.map((entry) => (
                <option key={entry.value} value={entry.value}>
                  {entry.label}
                </option>
              ))}
            </select>
            <p className="hint">How hard a reasoning model thinks; switch it later with keel reasoning.</p>
          </div>
          <div className="field">
            <label htmlFor="ns-title">Title (optional)</label>
            <input id="ns-title" value={title} onChange={(event) => setTitle(event.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="ns-cap">Spend cap, USD (optional)</label>
            <input
              id="ns-cap"
              value={capUsd}
              inputMode="decimal"
              onChange={(event) => setCapUsd(event.target.value)}
              placeholder="settings' default"
            />
            <p className="hint">No request is sent that could take the session past it; raise it later.</p>
          </div>
        </div>
        <div className="field">
          <label htmlFor="ns-network">Network allowlist</label>
          <textarea
            id="ns-network"
            rows={2}
            value={network}
            onChange={(event) => setNetwork(event.target.value)}
            placeholder="registry.npmjs.org"
            spellCheck={false}
          />
          <p className="hint">
            Hosts commands may reach, one per line. Empty: commands get no network at all.
          </p>
        </div>
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog-actions">
          <button type="button" className="button-secondary" onClick={() => dialogRef.current?.close()}>
            Cancel
          </button>
          <button type="submit" className="button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create session'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
