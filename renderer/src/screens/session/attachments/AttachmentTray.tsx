import { useRef, type JSX } from 'react';
import { unshownAttachmentsWarning } from '../../../../../main/ipc/contract.js';
import type { Attachments } from './useAttachments.js';
import './attachments.css';

type Props = {
  attachments: Attachments;
  /** The session's pinned model: a model without vision is said before sending. */
  model: { provider: string; model: string } | undefined;
  disabled: boolean;
};

const KINDS: readonly string[] = ['anthropic', 'openai', 'openai-compatible'];

/**
 * The composer's files (issue #32): an Attach button (file picker), one chip per staged file with its
 * preview and a remove button, the last refusal, and what the pinned model will not see.
 */
export function AttachmentTray({ attachments, model, disabled }: Props): JSX.Element {
  const picker = useRef<HTMLInputElement>(null);
  const { files, problem } = attachments;
  const pin =
    model && KINDS.includes(model.provider)
      ? { provider: model.provider as 'anthropic' | 'openai' | 'openai-compatible', model: model.model }
      : undefined;
  const warning =
    pin && files.length > 0
      ? unshownAttachmentsWarning(
          pin,
          files.map((file) => file.mimeType),
        )
      : undefined;
  return (
    <div className="attachment-tray" aria-label="Attachments">
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        accept="image/png,image/jpeg,image/gif,image/webp,application/pdf"
        aria-label="Attach files"
        onChange={(event) => {
          void attachments.add(Array.from(event.target.files ?? []));
          event.target.value = '';
        }}
      />
      <button
        type="button"
        className="button-secondary attachment-add"
        disabled={disabled}
        onClick={() => picker.current?.click()}
      >
        Attach…
      </button>
      {files.map((file) => (
        <span key={file.id} className="attachment-chip" data-testid="attachment-chip">
          {file.mimeType === 'application/pdf' ? (
            <span className="attachment-pdf">PDF</span>
          ) : (
            <img src={`data:${file.mimeType};base64,${file.data}`} alt="" />
          )}
          <span className="attachment-name">{file.name}</span>
          <button
            type="button"
            aria-label={`Remove ${file.name}`}
            onClick={() => attachments.remove(file.id)}
          >
            ×
          </button>
        </span>
      ))}
      {problem ? (
        <p className="attachment-problem" role="alert">
          {problem}
        </p>
      ) : null}
      {warning ? (
        <p className="attachment-warning" role="status">
          {warning}
        </p>
      ) : null}
    </div>
  );
}
