import type { PayloadAttachment } from '../common/payload.js';

/*
 * A user message's attached files (issue #32) as each wire format's blocks. Files with bytes (`data`, set by
 * the turn when the model takes their type) become blocks before the text, as the providers advise; the
 * others are told by one note each after the text. Pure and deterministic, so the cached prefix stays stable.
 */

/** The prompt's text followed by one note per file the request does not carry. */
export function withAttachmentNotes(text: string, attachments: readonly PayloadAttachment[]): string {
  const notes = attachments
    .filter((file) => file.data === undefined)
    .map(
      (file) =>
        `[attached ${file.mimeType === 'application/pdf' ? 'PDF' : 'image'} ${file.handle} (${file.mimeType}` +
        `${file.name ? `, ${file.name}` : ''}) is not shown to this model]`,
    );
  return [text, ...notes].filter((part) => part !== '').join('\n');
}

const sent = (attachments: readonly PayloadAttachment[]) =>
  attachments.filter((file): file is PayloadAttachment & { data: string } => file.data !== undefined);

const dataUrl = (file: PayloadAttachment & { data: string }) => `data:${file.mimeType};base64,${file.data}`;

/** Anthropic Messages: `image` and `document` blocks with a base64 source, then the text block. */
export function anthropicUserBlocks(content: string, attachments: readonly PayloadAttachment[]) {
  const blocks = sent(attachments).map((file) =>
    file.mimeType === 'application/pdf'
      ? {
          type: 'document' as const,
          source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: file.data },
          ...(file.name ? { title: file.name } : {}),
        }
      : {
          type: 'image' as const,
          source: { type: 'base64' as const, media_type: file.mimeType, data: file.data },
        },
  );
  const text = withAttachmentNotes(content, attachments);
  return text === '' ? blocks : [...blocks, { type: 'text' as const, text }];
}

/** OpenAI Responses: `input_image` (a data URL) and `input_file` (a PDF as `file_data`), then `input_text`. */
export function responsesUserContent(content: string, attachments: readonly PayloadAttachment[]) {
  const parts = sent(attachments).map((file) =>
    file.mimeType === 'application/pdf'
      ? {
          type: 'input_file' as const,
          filename: file.name ?? file.handle.split('/').pop() ?? 'document.pdf',
          file_data: dataUrl(file),
        }
      : { type: 'input_image' as const, image_url: dataUrl(file), detail: 'auto' as const },
  );
  const text = withAttachmentNotes(content, attachments);
  return text === '' ? parts : [...parts, { type: 'input_text' as const, text }];
}

/**
 * Chat completions: `image_url` parts (a data URL), then the text part. PDFs are told, never sent: the
 * servers that speak this format rarely take files.
 */
export function chatUserContent(content: string, attachments: readonly PayloadAttachment[]) {
  const shown = attachments.map((file) =>
    file.mimeType === 'application/pdf' ? { ...file, data: undefined } : file,
  );
  const parts = sent(shown).map((file) => ({
    type: 'image_url' as const,
    image_url: { url: dataUrl(file) },
  }));
  const text = withAttachmentNotes(content, shown);
  return text === '' ? parts : [...parts, { type: 'text' as const, text }];
}
