import { useCallback, useState, type JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { EventOf } from '../../api/types.js';
import { useQuery } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { useApp } from '../../appContext.js';
import { formatClock, formatDateTime } from '../../lib/format.js';
import { ApprovalCard, type DecisionReceipt } from './ApprovalCard.js';
import { GrantsList, scopeLabel } from './GrantsList.js';
import { describeScope } from './scopes.js';
import './approvals.css';

type ApprovalRequest = EventOf<'approval_request'>;

/**
 * Receipts kept on screen: the newest decision only, one line (issue #37: the footer's receipts take one line;
 * every decision stays in the conversation as its own row).
 */
const MAX_RECEIPTS = 1;
const GRANT_KINDS = new Set(['approval_granted', 'approval_revoked']);

type Props = {
  sessionId: string;
  /** The session's pending requests, oldest first (sessions.open). */
  pending: readonly ApprovalRequest[];
  readOnly: boolean;
  /** A turn of this session runs (revoking waits for it). */
  running?: boolean;
  /** A decision was recorded: the session's summary should be re-read. */
  onDecided: () => void;
};

/**
 * The approvals of one session: every pending request in full (the oldest takes the keyboard shortcuts),
 * what was just decided and when, and the grants in effect with Revoke. Renders nothing when all three are empty.
 */
export function ApprovalPanel({
  sessionId,
  pending,
  readOnly,
  running = false,
  onDecided,
}: Props): JSX.Element | null {
  const { info } = useApp();
  const [receipts, setReceipts] = useState<DecisionReceipt[]>([]);
  const grants = useQuery(() => call(keel().grants.list({ sessionId })), [sessionId]);
  const { reload: reloadGrants } = grants;

  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (id === sessionId && GRANT_KINDS.has(event.kind)) reloadGrants();
  });

  const decided = useCallback(
    (receipt: DecisionReceipt) => {
      setReceipts((previous) => [receipt, ...previous].slice(0, MAX_RECEIPTS));
      onDecided();
    },
    [onDecided],
  );

  // A request decided here may still be listed until the summary is re-read: it is not shown twice.
  const decidedSeqs = new Set(receipts.map((receipt) => receipt.request.seq));
  const open = pending.filter((request) => !decidedSeqs.has(request.seq));
  const grantList = grants.data?.grants ?? [];
  if (open.length === 0 && receipts.length === 0 && grantList.length === 0) return null;
  const platform = info?.platform ?? navigator.platform;

  return (
    <section className="approvals" aria-label="Approvals">
      {open.length > 1 ? (
        <p className="approvals-count" role="status">
          {open.length} approvals pending; the shortcuts act on the first.
        </p>
      ) : null}
      {open.map((request, index) => (
        <ApprovalCard
          key={request.seq}
          sessionId={sessionId}
          request={request}
          readOnly={readOnly}
          primary={index === 0}
          platform={platform}
          onDecided={decided}
        />
      ))}
      {receipts.length > 0 ? (
        <ul className="receipts" aria-label="Decisions">
          {receipts.map((receipt) => (
            <Receipt
              key={receipt.event.seq}
              receipt={receipt}
              onDismiss={() =>
                setReceipts((previous) => previous.filter((other) => other.event.seq !== receipt.event.seq))
              }
            />
          ))}
        </ul>
      ) : null}
      <GrantsList
        sessionId={sessionId}
        grants={grantList}
        readOnly={readOnly}
        running={running}
        onRevoked={reloadGrants}
      />
    </section>
  );
}

/** One decision as recorded: allowed (with its scope) or denied (with the reason), and when. */
function Receipt({ receipt, onDismiss }: { receipt: DecisionReceipt; onDismiss: () => void }): JSX.Element {
  const { request, event, target } = receipt;
  const granted = event.kind === 'approval_granted';
  const what = (
    <>
      <code>{request.tool}</code>
      {target ? (
        <>
          {' '}
          <code className="receipt-target">{target}</code>
        </>
      ) : null}
    </>
  );
  return (
    <li className={`receipt ${granted ? 'receipt-granted' : 'receipt-denied'}`} data-event-seq={event.seq}>
      <span className="receipt-icon" aria-hidden="true">
        {granted ? '✓' : '✕'}
      </span>
      <span
        className="receipt-text"
        title={event.kind === 'approval_granted' ? describeScope(request.tool, event.scope) : undefined}
      >
        {event.kind === 'approval_granted' ? (
          <>
            Allowed {what} {event.scope === 'once' ? 'once' : <>for {scopeLabel(event.scope)}</>}
            <span className="muted"> — {describeScope(request.tool, event.scope)}</span>
          </>
        ) : event.kind === 'approval_denied' ? (
          <>
            Denied {what}
            {event.reason ? <span className="receipt-reason"> — “{event.reason}”</span> : null}
          </>
        ) : null}
        <time className="muted" dateTime={event.at} title={formatDateTime(event.at)}>
          {' '}
          · {formatClock(event.at)}
        </time>
      </span>
      <button type="button" className="link-button" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </li>
  );
}
