import { useState, type JSX } from 'react';
import type { HistoryActions } from './useHistoryActions.js';

/**
 * Under a commit row: "Undo this turn's changes" (the whole turn when the transcript knows its number, else this
 * one recorded change).
 */
export function CommitActions({
  seq,
  turn,
  actions,
}: {
  seq: number;
  turn?: number;
  actions: HistoryActions;
}): JSX.Element {
  return (
    <div className="history-actions">
      <button
        type="button"
        className="link-button"
        disabled={!actions.enabled || actions.busy}
        title={
          turn === undefined
            ? 'Reverts this change onto the folder as it is now; your later edits are merged, a conflict writes nothing'
            : `Reverts every change turn ${turn} made onto the folder as it is now; your later edits are merged, a conflict writes nothing`
        }
        onClick={() => actions.revert(turn === undefined ? { seq } : { turn })}
      >
        {turn === undefined ? 'Undo this change' : 'Undo this turn’s changes'}
      </button>
    </div>
  );
}

/** Under a snapshot of the user's work: "Restore these files" (what the folder holds there now is kept first). */
export function SnapshotActions({ seq, actions }: { seq: number; actions: HistoryActions }): JSX.Element {
  return (
    <div className="history-actions">
      <button
        type="button"
        className="link-button"
        disabled={!actions.enabled || actions.busy}
        title="Writes these files back as they were kept; what the folder holds there now is kept first as a new snapshot"
        onClick={() => actions.restoreSnapshot(seq)}
      >
        Restore these files
      </button>
    </div>
  );
}

/**
 * Under a user message: "Rewind to here" (the conversation continues from just before this message; with the
 * box ticked, the files' later changes are undone too) and "Fork from here" (a new session up to that point).
 */
export function UserMessageActions({
  seq,
  prompt,
  actions,
}: {
  seq: number;
  /** The message's text: a rewind gives it back to the composer to edit. */
  prompt?: string;
  actions: HistoryActions;
}): JSX.Element {
  const [confirming, setConfirming] = useState<'rewind' | 'fork' | undefined>();
  const [files, setFiles] = useState(false);
  const disabled = !actions.enabled || actions.busy;
  // The point just before this message: where a rewind or a fork may start (main checks it).
  const point = seq - 1;
  if (confirming === 'rewind')
    return (
      <div className="history-actions history-confirm" role="group" aria-label="Rewind to here">
        <span>
          Continue the conversation from before this message? Later messages are kept, folded, and this
          message goes back to the composer to edit.
        </span>
        <label>
          <input type="checkbox" checked={files} onChange={(event) => setFiles(event.target.checked)} />
          Also undo the changes to the files made since
        </label>
        <button
          type="button"
          className="button-primary"
          disabled={disabled}
          onClick={() => {
            setConfirming(undefined);
            actions.rewind(point, files, prompt);
          }}
        >
          Rewind
        </button>
        <button type="button" className="button-secondary" onClick={() => setConfirming(undefined)}>
          Cancel
        </button>
      </div>
    );
  if (confirming === 'fork')
    return (
      <div className="history-actions history-confirm" role="group" aria-label="Fork from here">
        <span>
          Start a new session with this conversation up to before this message (same model and folders)? This
          session stays as it is.
        </span>
        <button
          type="button"
          className="button-primary"
          disabled={disabled}
          onClick={() => {
            setConfirming(undefined);
            actions.fork(point);
          }}
        >
          Fork
        </button>
        <button type="button" className="button-secondary" onClick={() => setConfirming(undefined)}>
          Cancel
        </button>
      </div>
    );
  return (
    <div className="history-actions">
      <button
        type="button"
        className="link-button"
        disabled={disabled}
        onClick={() => {
          setFiles(false);
          setConfirming('rewind');
        }}
      >
        Rewind to here
      </button>
      <button
        type="button"
        className="link-button"
        disabled={disabled}
        title="A new session with this conversation up to before this message, same model and folders"
        onClick={() => setConfirming('fork')}
      >
        Fork from here
      </button>
    </div>
  );
}
