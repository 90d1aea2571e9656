import { useEffect, useState, type FormEvent, type JSX } from 'react';
import type { CostReport } from '../../../../main/ipc/contract.js';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery, useThrottledReload } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { formatTokens } from '../../lib/format.js';
import { costNote, formatCost, formatCostKnown } from '../trace/traceFormat.js';

/** While a turn runs, spend is read again at most this often (each read sums the whole log). */
const REFRESH_MS = 1500;

/** Events that change what was spent or the caps. */
const SPEND_KINDS = new Set([
  'assistant_message',
  'compaction',
  'budget_set',
  'budget_reached',
  'subagent_result',
]);

/**
 * The session's spend in its header (#31): what it spent (subagents included) against its caps, the running
 * turn's burn rate (USD per minute since its prompt), and a form to change the caps (budget.set).
 */
export function SpendMeter({
  sessionId,
  running,
  readOnly,
}: {
  sessionId: string;
  running: boolean;
  readOnly: boolean;
}): JSX.Element | null {
  const cost = useQuery(() => call(keel().cost.report({ sessionId })), [sessionId]);
  const { reload, set } = cost;
  const scheduleReload = useThrottledReload(reload, REFRESH_MS);
  useSubscription('event.appended', (payload) => {
    if (payload.sessionId !== sessionId) return;
    // A new turn starts its burn rate at once; spend within it is read at most every REFRESH_MS.
    if (payload.event.kind === 'user_message') reload();
    else if (SPEND_KINDS.has(payload.event.kind)) scheduleReload();
  });
  useSubscription('session.status', (payload) => {
    if (payload.sessionId === sessionId && !payload.running) reload();
  });
  // The burn rate moves with the clock while a turn runs.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return undefined;
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, [running]);
  const [editing, setEditing] = useState(false);
  const report = cost.data?.report;
  if (!report) return null;
  const { total, caps } = report;
  const rate = running ? burnRate(report, now) : undefined;
  return (
    <span className="spend-meter" data-testid="session-spend" title={costNote(total.usdKnown)}>
      spent <strong data-testid="session-spend-usd">{formatCostKnown(total.usd, total.usdKnown)}</strong>
      {caps.usd !== undefined ? <> of {formatCost(caps.usd)}</> : null}
      {' · '}
      {formatTokens(total.tokens)} tokens
      {caps.tokens !== undefined ? <> of {formatTokens(caps.tokens)}</> : null}
      {rate !== undefined ? (
        <span className="spend-rate" data-testid="session-burn-rate">
          {' · '}
          {formatCost(rate)}/min this turn
        </span>
      ) : null}{' '}
      {readOnly ? null : (
        <button type="button" className="link-button" onClick={() => setEditing(!editing)}>
          {caps.usd === undefined && caps.tokens === undefined ? 'Set cap' : 'Change cap'}
        </button>
      )}
      {editing ? (
        <CapForm
          caps={caps}
          onDone={(next) => {
            if (next) set({ report: next });
            setEditing(false);
          }}
          sessionId={sessionId}
        />
      ) : null}
    </span>
  );
}

/** USD per minute of the newest turn, from its prompt to now. */
function burnRate(report: CostReport, now: number): number | undefined {
  const latest = report.latestTurn;
  if (!latest) return undefined;
  const minutes = (now - Date.parse(latest.startedAt)) / 60_000;
  return minutes > 0 ? latest.usd / minutes : undefined;
}

/** Caps as text fields: empty removes a cap. */
function CapForm({
  sessionId,
  caps,
  onDone,
}: {
  sessionId: string;
  caps: CostReport['caps'];
  onDone: (report: CostReport | undefined) => void;
}): JSX.Element {
  const [usd, setUsd] = useState(caps.usd === undefined ? '' : String(caps.usd));
  const [tokens, setTokens] = useState(caps.tokens === undefined ? '' : String(caps.tokens));
  const [error, setError] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const usdValue = usd.trim() === '' ? null : Number(usd);
    const tokenValue = tokens.trim() === '' ? null : Number(tokens);
    if ((usdValue !== null && !(usdValue >= 0)) || (tokenValue !== null && !Number.isInteger(tokenValue))) {
      setError('A cap is a number of 0 or more (tokens: a whole number); leave it empty for none.');
      return;
    }
    call(keel().budget.set({ sessionId, usd: usdValue, tokens: tokenValue })).then(
      (result) => onDone(result.report),
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  };
  return (
    <form className="cap-form" onSubmit={submit} aria-label="Spend cap">
      <label>
        USD <input value={usd} inputMode="decimal" onChange={(e) => setUsd(e.target.value)} size={6} />
      </label>
      <label>
        tokens{' '}
        <input value={tokens} inputMode="numeric" onChange={(e) => setTokens(e.target.value)} size={9} />
      </label>
      <button type="submit">Save</button>
      <button type="button" className="link-button" onClick={() => onDone(undefined)}>
        Cancel
      </button>
      {error ? <span className="form-error">{error}</span> : null}
    </form>
  );
}
