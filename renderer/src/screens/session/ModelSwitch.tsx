import { useEffect, useMemo, useRef, useState, type FormEvent, type JSX } from 'react';
import type { ModelPin } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { ProviderKind } from '../../api/types.js';
import { useApp } from '../../appContext.js';
import { ModelFields } from '../newSession/ModelFields.js';
import { ModelList } from '../newSession/ModelList.js';
import { ProviderModelPicker } from '../newSession/ProviderModelPicker.js';
import {
  findCatalogueModel,
  modelChoices,
  pinNote,
  retirementOf,
  switchTarget,
  catalogueToday,
} from '../newSession/modelLifecycle.js';
import { useCatalogue } from '../newSession/useCatalogue.js';
import { PROVIDERS } from '../settings/providers.js';
import { EffortSelect, shownEffort, UNKNOWN_REASONING, type EffortValue } from './EffortSelect.js';
import './modelSwitch.css';

/** Said once a switch made during a turn is taken: the turn's next request uses it. */
const QUEUED = 'A turn is running: its next request uses this (the one streaming now keeps the old one).';

const dayFormat = new Intl.DateTimeFormat(undefined, {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});

/** A catalogue day (YYYY-MM-DD, UTC) in the reader's words, machine-readable in `dateTime`. */
function Day({ day }: { day: string }): JSX.Element {
  return <time dateTime={day}>{dayFormat.format(new Date(`${day}T00:00:00Z`))}</time>;
}

/**
 * The session header's warning when its pinned model is retired (every request fails) or retires within 30
 * days, with the day and a button that opens the model switch on the replacement (or suggested) model.
 * Renders nothing for a model that is fine or that the catalogue does not know.
 */
export function ModelRetirementWarning({
  pin,
  canSwitch,
  onSwitch,
}: {
  pin: ModelPin;
  /** False while a turn runs or the session is read-only. */
  canSwitch: boolean;
  onSwitch: (model: string | undefined) => void;
}): JSX.Element | null {
  const catalogue = useCatalogue().data;
  const today = catalogueToday(catalogue);
  const retirement = retirementOf(catalogue, pin.provider, pin.model, today);
  if (!retirement) return null;
  const target = switchTarget(catalogue, pin.provider, pin.model, today);
  return (
    <div
      className={`model-retirement${retirement.retired ? ' is-retired' : ''}`}
      role={retirement.retired ? 'alert' : 'status'}
      aria-label="Model retirement"
    >
      <p>
        {retirement.retired ? (
          <>
            <strong>
              {pin.model} was retired
              {retirement.retiresOn ? (
                <>
                  {' '}
                  on <Day day={retirement.retiresOn} />
                </>
              ) : null}
              .
            </strong>{' '}
            Every request to it fails: this session stays on it until you switch its model.
          </>
        ) : (
          <>
            <strong>
              {pin.model} retires on <Day day={retirement.retiresOn ?? today} /> (
              {retirement.daysLeft === 1 ? 'tomorrow' : `in ${retirement.daysLeft} days`}).
            </strong>{' '}
            From that day every request to it fails; switch this session&apos;s model before then.
          </>
        )}
      </p>
      <button
        type="button"
        className="button-primary"
        disabled={!canSwitch}
        title={canSwitch ? undefined : 'Wait for the turn to end (or for the session to be writable).'}
        onClick={() => onSwitch(target)}
      >
        {target ? `Switch to ${target}…` : 'Switch model…'}
      </button>
    </div>
  );
}

/**
 * The model switch: provider, model (the catalogue's choices, retired ones left out), base URL, for a model
 * Keel does not know its context window, and the reasoning effort (the efforts the chosen model takes).
 * Recorded as model_changed (with the effort); the effort alone as reasoning_changed. The next request uses it.
 */
export function ModelSwitchDialog({
  sessionId,
  pin,
  initialModel,
  running = false,
  onClose,
}: {
  sessionId: string;
  pin: ModelPin;
  /** A turn runs: the switch applies from its next request (issue #37), said in the dialog. */
  running?: boolean;
  /** The model to start on (the replacement of a retiring one); default: the pinned one. */
  initialModel?: string | undefined;
  onClose: () => void;
}): JSX.Element {
  const { settings } = useApp();
  const catalogue = useCatalogue().data;
  const dialogRef = useRef<HTMLDialogElement>(null);
  const [provider, setProvider] = useState<ProviderKind>(pin.provider);
  const [model, setModel] = useState(initialModel ?? pin.model);
  const [baseUrl, setBaseUrl] = useState(pin.baseUrl ?? '');
  const [contextWindow, setContextWindow] = useState('');
  const [effort, setEffort] = useState<EffortValue>(pin.reasoningEffort ?? 'default');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // Main's warnings about the switch made (lifecycle, an effort that fell back): shown before closing.
  const [warnings, setWarnings] = useState<string[]>([]);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);

  const today = catalogueToday(catalogue);
  const models = useMemo(() => modelChoices(catalogue, provider, today), [catalogue, provider, today]);
  const chosen = model.trim();
  const picked = findCatalogueModel(catalogue, provider, chosen);
  const note = pinNote(picked, today, picked && switchTarget(catalogue, provider, picked.id, today));
  const knownWindow = picked?.contextWindow ?? settings?.settings.contextWindows[chosen];
  const needsWindow = chosen !== '' && knownWindow === undefined;
  const reasoning = picked?.reasoning ?? UNKNOWN_REASONING;
  const effortChosen = shownEffort(effort, reasoning);
  const sameModel = provider === pin.provider && chosen === pin.model;
  const sameEffort = effortChosen === (pin.reasoningEffort ?? 'default');
  // An empty field keeps the session's endpoint (main falls back to it for the same provider).
  const sameEndpoint = baseUrl.trim() === '' || baseUrl.trim() === (pin.baseUrl ?? '');
  const unchanged = sameModel && sameEffort && sameEndpoint;
  // The effort alone is a reasoning_changed; a new endpoint (same model) or model is a model_changed.
  const effortOnly = sameModel && sameEndpoint;
  const action = !sameModel ? 'Switch model' : !sameEndpoint ? 'Switch endpoint' : 'Switch effort';

  const chooseProvider = (next: ProviderKind) => {
    setProvider(next);
    // The same provider keeps the session's endpoint; another starts from its settings.
    setBaseUrl(
      next === pin.provider ? (pin.baseUrl ?? '') : (settings?.settings.providers[next]?.baseUrl ?? ''),
    );
    setModel(next === pin.provider ? pin.model : (catalogue?.suggested[next] ?? ''));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    if (!chosen) return setError('Choose a model.');
    if (unchanged)
      return setError(`This session already uses ${pin.model}: choose another model, endpoint or effort.`);
    // The effort alone keeps the pinned window: a model Keel does not know needs one only when switched to.
    const windowTokens = needsWindow && !sameModel ? Number(contextWindow) : undefined;
    if (needsWindow && !sameModel && (!Number.isInteger(windowTokens) || (windowTokens ?? 0) <= 0))
      return setError(`Keel does not know ${chosen}: enter its context window in tokens.`);
    setBusy(true);
    try {
      if (effortOnly) {
        // The effort alone: reasoning_changed, the model and its endpoint untouched.
        const switched = await call(
          keel().sessions.setReasoning({
            sessionId,
            effort: effortChosen === 'default' ? reasoning.defaultEffort : effortChosen,
          }),
        );
        if (switched.queued) setWarnings([QUEUED]);
        else dialogRef.current?.close();
        return;
      }
      const result = await call(
        keel().sessions.setModel({
          sessionId,
          provider,
          model: chosen,
          ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}),
          // The same model at another endpoint keeps its pinned window.
          ...(windowTokens
            ? { contextWindow: windowTokens }
            : sameModel
              ? { contextWindow: pin.contextWindow }
              : {}),
          reasoningEffort: effortChosen === 'default' ? null : effortChosen,
        }),
      );
      const said = [result.warning, result.effortWarning, result.queued ? QUEUED : undefined].filter(
        (line): line is string => !!line,
      );
      if (said.length > 0) setWarnings(said);
      else dialogRef.current?.close();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const providerLabel = PROVIDERS.find((entry) => entry.kind === provider)?.label ?? provider;
  return (
    <dialog ref={dialogRef} className="dialog" aria-labelledby="model-switch-title" onClose={onClose}>
      <form className="form" onSubmit={(event) => void submit(event)}>
        <h2 id="model-switch-title">Switch model</h2>
        <p className="hint">
          Now on{' '}
          <code>
            {pin.provider}:{pin.model}
          </code>
          {pin.baseUrl ? (
            <>
              {' '}
              at <code>{pin.baseUrl}</code>
            </>
          ) : null}
          . The switch is recorded in the session; its next request goes to the new model or endpoint with the
          whole conversation so far.
          {running ? " A turn is running: it applies from that turn's next request." : ''}
        </p>
        <ProviderModelPicker
          idPrefix="ms"
          provider={provider}
          onProvider={chooseProvider}
          model={model}
          onModel={setModel}
          today={today}
        />
        <ModelList
          name="ms-model-choice"
          label={`${providerLabel} models`}
          provider={provider}
          models={models}
          selected={chosen}
          suggested={catalogue?.suggested[provider]}
          today={today}
          onPick={setModel}
        />
        <ModelFields
          idPrefix="ms"
          note={note}
          provider={provider}
          baseUrl={baseUrl}
          onBaseUrl={setBaseUrl}
          needsWindow={needsWindow && !sameModel}
          contextWindow={contextWindow}
          onContextWindow={setContextWindow}
        />
        <EffortSelect model={chosen} value={effort} reasoning={reasoning} onChange={setEffort} />
        {warnings.length > 0 ? (
          <div role="status" aria-label="Switched">
            <p>Switched. Keel says:</p>
            {warnings.map((line) => (
              <p key={line} className="hint">
                {line}
              </p>
            ))}
          </div>
        ) : null}
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog-actions">
          <button type="button" className="button-secondary" onClick={() => dialogRef.current?.close()}>
            {warnings.length > 0 ? 'Close' : 'Cancel'}
          </button>
          {warnings.length > 0 ? null : (
            <button type="submit" className="button-primary" disabled={busy || unchanged}>
              {busy ? 'Switching…' : action}
            </button>
          )}
        </div>
      </form>
    </dialog>
  );
}
