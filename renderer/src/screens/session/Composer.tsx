import { useState, type FormEvent, type JSX, type KeyboardEvent, type RefObject } from 'react';
import { AttachmentTray } from './attachments/AttachmentTray.js';
import { useAttachments, type SendAttachment } from './attachments/useAttachments.js';

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
  onSend: (prompt: string, attachments: SendAttachment[]) => Promise<boolean>;
  /** The pinned model (issue #32: the tray says what it will not see). */
  model?: { provider: string; model: string };
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
  model,
}: Props): JSX.Element {
  const [prompt, setPrompt] = useState('');
  const blocked = readOnly || running || awaitingApproval;
  const files = useAttachments(!readOnly);

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = prompt.trim();
    if (!text || blocked || busy) return;
    if (await onSend(text, files.forSend())) {
      setPrompt('');
      files.clear();
    }
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
    <form
      className="composer"
      onSubmit={(event) => void submit(event)}
      aria-label="Composer"
      onDragOver={files.onDragOver}
      onDrop={files.onDrop}
    >
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
        onPaste={files.onPaste}
        placeholder={placeholder}
        disabled={readOnly}
        rows={3}
      />
      <AttachmentTray attachments={files} model={model} disabled={readOnly} />
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
