import type { JSX } from 'react';
import { describeNewTurnEffect } from './changeRows.js';
import { useUncommitted } from './useChanges.js';
import './changes.css';

type Props = {
  sessionId: string;
  /** The session has Persistent Dir checkouts (sessions.open's persistentDirs is not empty). */
  hasCheckouts: boolean;
  /** A turn runs: its own changes are not yet at stake. */
  running: boolean;
  onReview: () => void;
};

/**
 * Above the composer: what a new turn would do to the checkouts' uncommitted changes (refused until manual
 * changes are applied or discarded; read-only dirs' changes discarded), with a way to review them. Nothing
 * when no change is at stake.
 */
export function NewTurnWarning({ sessionId, hasCheckouts, running, onReview }: Props): JSX.Element | null {
  const uncommitted = useUncommitted(sessionId, hasCheckouts);
  const data = uncommitted.data;
  if (!hasCheckouts || running || !data) return null;
  const sentence = describeNewTurnEffect(data.dirs) ?? data.newTurnWarning;
  if (!sentence) return null;
  return (
    <div className="new-turn-warning" role="status" aria-label="Uncommitted changes">
      <span aria-hidden="true" className="new-turn-warning-icon">
        ⚠
      </span>
      <p>{sentence}</p>
      <button type="button" className="button-secondary" onClick={onReview}>
        Review changes
      </button>
    </div>
  );
}
