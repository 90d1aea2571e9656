import { useState, type FormEvent, type JSX, type KeyboardEvent, type RefObject } from 'react';

type Props = {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  running: boolean;
  readOnly: boolean;
  /** Why the session is read-only, when the generic sentence would mislead (a subagent run by its parent). */
  readOnlyHint?: string;
  canResume: boolean;
  awaitingApproval: boolean;
  busy: boolean;
  error: string | undefined;
  onSend: (prompt: string) => Promise<boolean>;
  onStop: () => void;
  onResume: () => void;
};

/** The prompt box: Send (Enter; Shift+Enter for a new line), Stop while a turn runs (also Esc), Resume after an interruption. */
export function Composer({
  inputRef,
  running,
  readOnly,
  readOnlyHint,
  canResume,
  awaitingApproval,
  busy,
  error,
  onSend,
  onStop,
  onResume,
}: Props): JSX.Element {
  const [prompt, setPrompt] = useState('');
  const blocked = readOnly || running || awaitingApproval;

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = prompt.trim();
    if (!text || blocked || busy) return;
    if (await onSend(text)) setPrompt('');
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void submit();
    }
  };

  const placeholder = readOnly
    ? (readOnlyHint ?? 'This session is read-only.')
    : awaitingApproval
      ? 'Decide the pending approval above to continue.'
      : running
        ? 'The assistant is working… press Esc or Stop to interrupt.'
        : 'Ask for something, Enter to send, Shift+Enter for a new line';

  return (
    <form className="composer" onSubmit={(event) => void submit(event)} aria-label="Composer">
      {error ? (
        <p className="composer-error" role="alert">
          {error}
        </p>
      ) : null}
      <label className="visually-hidden" htmlFor="composer-input">
        Message
      </label>
      <textarea
        id="composer-input"
        ref={inputRef}
        value={prompt}
        onChange={(event) => setPrompt(event.target.value)}
        onKeyDown={onKeyDown}
        placeholder={placeholder}
        disabled={readOnly}
        rows={3}
      />
      <div className="composer-actions">
        {canResume && !running ? (
          <button type="button" className="button-secondary" onClick={onResume} disabled={busy || readOnly}>
            Resume
          </button>
        ) : null}
        {running ? (
          <button type="button" className="button-danger" onClick={onStop} aria-keyshortcuts="Escape">
            Stop
          </button>
        ) : (
          <button type="submit" className="button-primary" disabled={blocked || busy || prompt.trim() === ''}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
