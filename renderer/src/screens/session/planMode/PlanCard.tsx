import { useState, type JSX } from 'react';
import { call, describeError } from '../../../api/call.js';
import { keel } from '../../../api/keel.js';
import type { EventOf } from '../../../api/types.js';
import { Markdown } from '../../../components/Markdown.js';
import { PlanPolicy, planTextOf } from '../../../../../main/ipc/contract.js';
import './planMode.css';

const POLICY_LABELS: Record<PlanPolicy, string> = {
  ask: 'Ask before each edit and command',
  'auto-edit': 'Auto-edit (commands ask)',
  'full-auto': 'Full auto (inside the box)',
};

/**
 * Issue #30: the plan a plan-mode turn presented (its present_plan request), in markdown, with Approve (the
 * policy the session continues in) and Send back (comments the model revises the plan with). Both are events
 * (plan.decide), and the turn goes on at once.
 */
export function PlanCard({
  sessionId,
  request,
  policy,
  readOnly,
  onDecided,
}: {
  sessionId: string;
  request: EventOf<'approval_request'>;
  /** The session's policy now: the default choice when it is one a plan can continue in. */
  policy: string;
  readOnly: boolean;
  onDecided: () => void;
}): JSX.Element | null {
  const initial = PlanPolicy.safeParse(policy);
  const [chosen, setChosen] = useState<PlanPolicy>(initial.success ? initial.data : 'auto-edit');
  const [comments, setComments] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // Decided here: gone at once, before the session's summary is re-read (which no longer lists it).
  const [decided, setDecided] = useState(false);
  const plan = planTextOf(request.arguments) ?? request.arguments;

  const decide = async (
    input: { decision: 'approve'; policy: PlanPolicy } | { decision: 'reject'; comments: string },
  ) => {
    setBusy(true);
    setError(undefined);
    try {
      await call(keel().plan.decide({ sessionId, requestSeq: request.seq, ...input }));
      setDecided(true);
      onDecided();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  if (decided) return null;
  return (
    <article className="plan-card" aria-label="Plan waiting for approval">
      <h3>Plan</h3>
      <div className="plan-card-body">
        <Markdown text={plan} />
      </div>
      <div className="plan-card-actions" role="group" aria-label="Plan decision">
        <label>
          Then
          <select
            aria-label="Policy after approval"
            value={chosen}
            disabled={busy || readOnly}
            onChange={(event) => setChosen(event.target.value as PlanPolicy)}
          >
            {PlanPolicy.options.map((value) => (
              <option key={value} value={value}>
                {POLICY_LABELS[value]}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          className="button-primary"
          disabled={busy || readOnly}
          onClick={() => void decide({ decision: 'approve', policy: chosen })}
        >
          Approve plan
        </button>
      </div>
      <div className="plan-card-actions">
        <textarea
          aria-label="Comments on the plan"
          placeholder="What should change in the plan?"
          rows={2}
          value={comments}
          disabled={busy || readOnly}
          onChange={(event) => setComments(event.target.value)}
        />
        <button
          type="button"
          className="button-secondary"
          disabled={busy || readOnly || comments.trim() === ''}
          onClick={() => void decide({ decision: 'reject', comments: comments.trim() })}
        >
          Send back
        </button>
      </div>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}
