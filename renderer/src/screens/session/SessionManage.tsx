import { useEffect, useRef, useState, type FormEvent, type JSX } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

/**
 * The session's title, renamed where it is shown (issue 37): a click (or Enter) turns it into a field; Enter
 * saves (a `session_renamed` event), Esc keeps the old one.
 */
export function EditableTitle({
  sessionId,
  title,
  canRename,
  onRenamed,
}: {
  sessionId: string;
  title: string;
  canRename: boolean;
  onRenamed: () => void;
}): JSX.Element {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(title);
  const [error, setError] = useState<string | undefined>();
  const save = async (event?: FormEvent) => {
    event?.preventDefault();
    const next = text.trim();
    if (next === '' || next === title) return setEditing(false);
    try {
      await call(keel().sessions.rename({ sessionId, title: next }));
      setEditing(false);
      setError(undefined);
      onRenamed();
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  if (!editing)
    return (
      <h1 className="session-heading" title={title}>
        {canRename ? (
          <button
            type="button"
            className="session-title-button"
            title={`${title} — click to rename`}
            onClick={() => {
              setText(title);
              setEditing(true);
            }}
          >
            {title}
          </button>
        ) : (
          title
        )}
      </h1>
    );
  return (
    <form className="session-heading session-rename" onSubmit={(event) => void save(event)}>
      <input
        aria-label="Session title"
        value={text}
        maxLength={500}
        // The field replaces the title the user just clicked: it takes the focus and selects the text.
        autoFocus
        onFocus={(event) => event.currentTarget.select()}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.preventDefault();
            setEditing(false);
          }
        }}
        onBlur={() => void save()}
      />
      {error ? (
        <span className="composer-error" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  );
}

/**
 * Delete, asked first (issue 37): the dialog names what goes (the conversation, its log, what Keel kept for it)
 * and what stays (the project folder and its files). Deleting needs the session id repeated (the contract).
 */
export function DeleteSessionDialog({
  sessionId,
  title,
  projectFolder,
  onClose,
  onDeleted,
}: {
  sessionId: string;
  title: string;
  projectFolder: string;
  onClose: () => void;
  onDeleted: () => void;
}): JSX.Element {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await call(keel().sessions.delete({ sessionId, confirm: sessionId }));
      onDeleted();
    } catch (failure) {
      setError(describeError(failure));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialogRef} className="dialog" aria-labelledby="delete-session-title" onClose={onClose}>
      <div className="form">
        <h2 id="delete-session-title">Delete “{title}”?</h2>
        <p>
          This deletes the session for good: its conversation, its log and trace, and what Keel kept for it
          (command outputs, checkouts, snapshots of your files). It cannot be undone; Archive hides a session
          instead.
        </p>
        <p>
          Kept: the project folder <code>{projectFolder}</code> and every file in it, as they are now.
        </p>
        {error ? (
          <p className="composer-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog-actions">
          <button type="button" className="button-secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="button-danger" disabled={busy} onClick={() => void remove()}>
            {busy ? 'Deleting…' : 'Delete session'}
          </button>
        </div>
      </div>
    </dialog>
  );
}
