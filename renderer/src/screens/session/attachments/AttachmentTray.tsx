import { useRef, type JSX } from 'react';
import { ProviderKind, unshownAttachmentsWarning } from '../../../../../main/ipc/contract.js';
import type { Attachments } from './useAttachments.js';
import './attachments.css';

type Props = {
  attachments: Attachments;
  /** The session's pinned model: a model without vision is said before sending. */
  model: { provider: string; model: string } | undefined;
};

/**
 * The composer's Attach button (issue #32): a file picker beside Send, so staging files costs the composer no
 * row of its own.
 */
export function AttachButton({
  attachments,
  disabled,
}: {
  attachments: Attachments;
  disabled: boolean;
}): JSX.Element {
  const picker = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
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
    </>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The composer's staged files (issue #32): one chip per file with its preview and a remove button, the last
 * refusal, and what the pinned model will not see; nothing at all while there is none of these.
 */
export function AttachmentTray({ attachments, model }: Props): JSX.Element | null {
  const { files, problem, notice } = attachments;
  const pin =
    model && (ProviderKind.options as readonly string[]).includes(model.provider)
      ? { provider: model.provider as ProviderKind, model: model.model }
      : undefined;
  const warning =
    pin && files.length > 0
      ? unshownAttachmentsWarning(
          pin,
          files.flatMap((file) => (file.mimeType ? [file.mimeType] : [])),
        )
      : undefined;
  const uploads = files.filter((file) => !file.mimeType).length;
  if (files.length === 0 && !problem && !notice && !warning) return null;
  return (
    <div className="attachment-tray" aria-label="Attachments">
      {files.map((file) => (
        <span key={file.id} className="attachment-chip" data-testid="attachment-chip">
          {file.mimeType === undefined ? (
            <span className="attachment-pdf">FILE</span>
          ) : file.mimeType === 'application/pdf' ? (
            <span className="attachment-pdf">PDF</span>
          ) : (
            <img src={`data:${file.mimeType};base64,${file.data}`} alt="" />
          )}
          <span className="attachment-name">{file.name}</span>
          {file.mimeType === undefined ? (
            <span className="attachment-size">{formatBytes(file.size)}</span>
          ) : null}
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
      {notice ? (
        <p className="attachment-notice" role="status">
          {notice}
        </p>
      ) : null}
      {warning ? (
        <p className="attachment-warning" role="status">
          {warning}
        </p>
      ) : null}
      {uploads > 0 ? (
        <p className="attachment-note">
          {uploads === 1 ? 'The file' : `The ${uploads} files`} without a preview{' '}
          {uploads === 1 ? 'is' : 'are'} staged at /session/uploads/ and named in your message; the model
          reads {uploads === 1 ? 'it' : 'them'} with its tools.
        </p>
      ) : null}
    </div>
  );
}
