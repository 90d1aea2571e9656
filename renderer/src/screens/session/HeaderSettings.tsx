import { useEffect, useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { findCatalogueModel } from '../newSession/modelLifecycle.js';
import { useCatalogue } from '../newSession/useCatalogue.js';

type Opened = ChannelOutput<'sessions.open'>;
type Policy = Opened['policy'];

const POLICIES: { value: Policy; label: string }[] = [
  { value: 'read-only', label: 'read-only' },
  { value: 'ask', label: 'ask' },
  { value: 'auto-edit', label: 'auto-edit' },
  { value: 'full-auto', label: 'full-auto' },
];

/** Why the header's switches are off, in the user's words; undefined when they are on. */
export function switchesOffReason(opened: Opened): string | undefined {
  return opened.readOnly
    ? 'This session is read-only here (its folder is gone or another Keel holds it).'
    : undefined;
}

/** Said while a turn runs: a change is taken by its next model request, not the one streaming now. */
export const NEXT_REQUEST = 'A turn is running: a change applies from its next request.';

/** An endpoint as the header shows it: its host (the whole URL in the tooltip). */
function endpointLabel(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

/**
 * Issue #37: the session's model, endpoint, reasoning effort and policy as they are now, each changeable
 * here: the model, endpoint and effort through the model switch (model_changed / reasoning_changed), the
 * policy with its own select (policy_changed), the same events `keel model`, `keel reasoning` and
 * `keel policy` record.
 */
export function HeaderSettings({
  opened,
  running,
  onSwitch,
  onChanged,
}: {
  opened: Opened;
  running: boolean;
  onSwitch: () => void;
  onChanged?: (() => void) | undefined;
}): JSX.Element {
  const { pin, policy, toolMode, session } = opened;
  const catalogue = useCatalogue().data;
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const off = switchesOffReason(opened);
  // A change queued for the running turn, said until the turn records it (the header then shows it).
  const [queued, setQueued] = useState<string | undefined>();
  useEffect(() => {
    if (!running) setQueued(undefined);
  }, [running]);
  const known = findCatalogueModel(catalogue, pin.provider, pin.model);
  const effort = pin.reasoningEffort ?? known?.reasoning?.defaultEffort ?? 'off';
  const effortNote = pin.reasoningEffort ? '' : " (the model's default)";

  const changePolicy = async (next: Policy) => {
    setError(undefined);
    setBusy(true);
    try {
      const result = await call(keel().sessions.setPolicy({ sessionId: session.id, policy: next }));
      if (result.queued) setQueued(`policy ${next} from the next request`);
      onChanged?.();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <span
        className="header-model"
        title={`${pin.provider}:${pin.model}${pin.baseUrl ? ` at ${pin.baseUrl}` : ''}, reasoning effort ${effort}${effortNote}`}
      >
        {/* Short, so the header keeps its lines: an endpoint names where requests go, else the provider does. */}
        {pin.baseUrl ? null : `${pin.provider}:`}
        <strong>{pin.model}</strong>
        {pin.baseUrl ? (
          <span className="header-endpoint" aria-label="Endpoint">
            {' '}
            @ <code>{endpointLabel(pin.baseUrl)}</code>
          </span>
        ) : null}
        <span className="header-effort" aria-label="Reasoning effort">
          {' '}
          · effort {effort}
        </span>{' '}
        <button
          type="button"
          className="link-button"
          disabled={off !== undefined}
          title={
            off ??
            (running
              ? NEXT_REQUEST
              : 'Change the model, its endpoint or its reasoning effort (from the next request)')
          }
          onClick={onSwitch}
        >
          Switch model
        </button>
      </span>
      <label className="header-policy">
        policy{' '}
        <select
          aria-label="Approval policy"
          title={off ?? (running ? NEXT_REQUEST : 'Approval policy: the next tool call is judged by it')}
          value={policy}
          disabled={off !== undefined || busy}
          onChange={(event) => void changePolicy(event.target.value as Policy)}
        >
          {POLICIES.map((entry) => (
            <option
              key={entry.value}
              value={entry.value}
              // A session created read-only has no write tools: only read-only applies (core/approvals/policy.ts).
              disabled={toolMode === 'read-only' && entry.value !== 'read-only'}
            >
              {entry.label}
            </option>
          ))}
        </select>
      </label>
      {queued ? (
        <span className="header-queued" role="status">
          {queued}
        </span>
      ) : null}
      {error ? (
        <span className="form-error" role="alert">
          {error}
        </span>
      ) : null}
    </>
  );
}
