import { useEffect, type JSX } from 'react';
import { prefetchMonaco } from '../../components/monaco/loadMonaco.js';
import { useUncommitted } from './useChanges.js';
import './changes.css';

/** The session header's Changes toggle, with the count of uncommitted files in the session's checkouts. */
export function ChangesButton({
  sessionId,
  open,
  onToggle,
}: {
  sessionId: string;
  open: boolean;
  onToggle: () => void;
}): JSX.Element {
  const uncommitted = useUncommitted(sessionId, true);
  // A session with checkouts is likely to be reviewed: the diff editor's code loads while nothing else runs.
  useEffect(() => prefetchMonaco(), []);
  const count = (uncommitted.data?.dirs ?? []).reduce((sum, dir) => sum + dir.files.length, 0);
  return (
    <button
      type="button"
      className={`changes-toggle${open ? ' is-open' : ''}`}
      aria-pressed={open}
      onClick={onToggle}
      aria-label={count > 0 ? `Changes, ${count} uncommitted` : 'Changes'}
    >
      Changes
      {count > 0 ? <span className="changes-toggle-count">{count}</span> : null}
    </button>
  );
}
