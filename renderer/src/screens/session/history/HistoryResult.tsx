import type { JSX } from 'react';
import { RevertConflicts } from './RevertConflicts.js';
import type { HistoryState } from './useHistoryActions.js';
import './history.css';

/** Above the composer: what an undo / rewind / fork that did not simply succeed said (conflicts, a refusal). */
export function HistoryResult({
  state,
  onDismiss,
}: {
  state: HistoryState;
  onDismiss: () => void;
}): JSX.Element | null {
  return (
    <>
      {state.error ? (
        <p className="banner history-error" role="alert">
          <span>{state.error}</span>
          <button type="button" className="link-button" onClick={onDismiss}>
            Dismiss
          </button>
        </p>
      ) : null}
      {state.notice ? (
        <p className="turn-outcome" role="status">
          {state.notice}
        </p>
      ) : null}
      {state.conflicts ? (
        <RevertConflicts what={state.conflicts.what} conflicts={state.conflicts.files} onClose={onDismiss} />
      ) : null}
    </>
  );
}
