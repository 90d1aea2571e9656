import { useState, type JSX } from 'react';
import type { EventOf } from '../../api/types.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { prettyJson } from '../../lib/format.js';

type ApprovalRequest = EventOf<'approval_request'>;

/** The pending approval requests of a session with Allow once / Allow for session / Deny (with a reason). */
export function ApprovalPanel({
  sessionId,
  pending,
  readOnly,
  onDecided,
}: {
  sessionId: string;
  pending: readonly ApprovalRequest[];
  readOnly: boolean;
  onDecided: () => void;
}): JSX.Element | null {
  if (pending.length === 0) return null;
  return (
    <section className="approvals" aria-label="Pending approvals">
      {pending.map((request) => (
        <ApprovalCard
          key={request.seq}
          sessionId={sessionId}
          request={request}
          readOnly={readOnly}
          onDecided={onDecided}
        />
      ))}
    </section>
  );
}

function ApprovalCard({
  sessionId,
  request,
  readOnly,
  onDecided,
}: {
  sessionId: string;
  request: ApprovalRequest;
  readOnly: boolean;
  onDecided: () => void;
}): JSX.Element {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const reasonId = `deny-reason-${request.seq}`;

  const decide = async (decision: 'once' | 'session' | 'deny') => {
    setBusy(true);
    setError(undefined);
    try {
      await call(
        keel().approvals.decide(
          decision === 'deny'
            ? {
                sessionId,
                requestSeq: request.seq,
                decision: 'deny',
                ...(reason.trim() ? { reason: reason.trim() } : {}),
              }
            : { sessionId, requestSeq: request.seq, decision: 'grant', scope: decision },
        ),
      );
      onDecided();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article className="approval-card" aria-label={`Approval needed: ${request.tool}`}>
      <header>
        <strong>Approval needed:</strong> <code>{request.tool}</code>
        {request.unknownOutcome ? (
          <span className="tag tag-warning">outcome of an earlier run unknown</span>
        ) : null}
      </header>
      {request.reason ? <p className="approval-reason">{request.reason}</p> : null}
      <pre className="tool-args" aria-label="Arguments">
        {prettyJson(request.arguments)}
      </pre>
      {request.diff ? (
        <pre className="tool-diff" aria-label="Proposed change">
          {request.diff}
        </pre>
      ) : null}
      {error ? (
        <p className="composer-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="approval-actions">
        <button
          type="button"
          className="button-primary"
          disabled={busy || readOnly}
          onClick={() => void decide('once')}
        >
          Allow once
        </button>
        <button
          type="button"
          className="button-secondary"
          disabled={busy || readOnly}
          onClick={() => void decide('session')}
        >
          Allow for session
        </button>
        <label className="visually-hidden" htmlFor={reasonId}>
          Reason for denying
        </label>
        <input
          id={reasonId}
          type="text"
          placeholder="Reason (optional, sent to the model)"
          value={reason}
          onChange={(event) => setReason(event.target.value)}
          disabled={busy || readOnly}
        />
        <button
          type="button"
          className="button-danger"
          disabled={busy || readOnly}
          onClick={() => void decide('deny')}
        >
          Deny
        </button>
      </div>
    </article>
  );
}
