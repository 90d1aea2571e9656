import { useCallback, useMemo, useRef, useState, type ClipboardEvent, type DragEvent } from 'react';
import {
  MAX_APP_UPLOAD_BYTES,
  MAX_ATTACHMENTS,
  MAX_IMAGE_BYTES,
  MAX_PDF_BYTES,
  looksLikeSvg,
  sniffAttachmentType,
  type AttachmentMimeType,
} from '../../../../../main/ipc/contract.js';

/*
 * The files staged for the next prompt (issue #32): pasted (a screenshot from the clipboard), dropped on the
 * composer or picked. Each is read here and checked by its first bytes for quick feedback: an image or a PDF
 * rides with the prompt (main checks it again, the bytes and the pixel limits, and that check is the one that
 * counts); any other file is staged at /session/uploads/<name> and named in the prompt (as `keel run --file`).
 */

/** One file as `turns.send` takes it. */
export type SendAttachment = { name: string; data: string };
/** What `turns.send` takes of the staged files: images and PDFs, and the other files for /session/uploads. */
export type SendFiles = { attachments: SendAttachment[]; uploads: SendAttachment[] };

export type StagedFile = {
  id: number;
  name: string;
  /** The type its bytes are (an image or a PDF); absent for a file staged into /session/uploads. */
  mimeType?: AttachmentMimeType;
  size: number;
  data: string;
};

export type Attachments = {
  files: readonly StagedFile[];
  /** Why the last file added was refused (shown in the tray until the next add). */
  problem: string | undefined;
  /** How the last file added was taken otherwise than asked (an SVG staged as text), until the next add. */
  notice: string | undefined;
  add: (files: readonly File[]) => Promise<void>;
  remove: (id: number) => void;
  clear: () => void;
  /** What `turns.send` takes. */
  forSend: () => SendFiles;
  onPaste: (event: ClipboardEvent) => void;
  onDragOver: (event: DragEvent) => void;
  onDrop: (event: DragEvent) => void;
};

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * The type a file's bytes are (none: a file for /session/uploads), or why it is refused. An SVG is never an image
 * here (it can hold script, and no provider takes it): it is staged as the text file it is, its name ending in
 * .svg so nothing downstream takes it for the image type its name or the clipboard claimed.
 */
function judge(
  name: string,
  bytes: Uint8Array,
): { mimeType: AttachmentMimeType | undefined; name: string; notice?: string } | { problem: string } {
  const mimeType = sniffAttachmentType(bytes);
  if (mimeType === undefined) {
    const svg = looksLikeSvg(bytes);
    if (bytes.length > MAX_APP_UPLOAD_BYTES) {
      return {
        problem:
          `"${name}" is ${megabytes(bytes.length)}; files other than images and PDFs are staged up to ` +
          `${megabytes(MAX_APP_UPLOAD_BYTES)} from here (keel run --file takes up to 64 MB)`,
      };
    }
    if (!svg) return { mimeType: undefined, name };
    const staged = /\.svg$/i.test(name) ? name : `${name}.svg`;
    return {
      mimeType: undefined,
      name: staged,
      notice:
        `"${name}" is an SVG image: it is not sent as an image (SVG can hold script, and models take PNG, ` +
        `JPEG, GIF or WebP). It is attached as a text file instead, "${staged}", which the model reads as ` +
        'markup; remove it to leave it out, or attach a PNG to show the picture.',
    };
  }
  const max = mimeType === 'application/pdf' ? MAX_PDF_BYTES : MAX_IMAGE_BYTES;
  if (bytes.length > max)
    return { problem: `"${name}" is ${megabytes(bytes.length)}; the limit is ${megabytes(max)}` };
  return { mimeType, name };
}

/** The composer's staged files and the paste / drop handlers that add to them. */
export function useAttachments(enabled: boolean): Attachments {
  const [files, setFiles] = useState<StagedFile[]>([]);
  const [problem, setProblem] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const nextId = useRef(1);

  const add = useCallback(
    async (incoming: readonly File[]) => {
      if (!enabled || incoming.length === 0) return;
      setProblem(undefined);
      setNotice(undefined);
      const read: StagedFile[] = [];
      for (const file of incoming) {
        const bytes = new Uint8Array(await file.arrayBuffer());
        const name = file.name || `pasted.${file.type.split('/')[1] ?? 'bin'}`;
        const verdict = judge(name, bytes);
        if ('problem' in verdict) {
          setProblem(verdict.problem);
          continue;
        }
        if (verdict.notice) setNotice(verdict.notice);
        read.push({
          id: nextId.current++,
          name: verdict.name,
          ...(verdict.mimeType ? { mimeType: verdict.mimeType } : {}),
          size: bytes.length,
          data: toBase64(bytes),
        });
      }
      setFiles((current) => {
        const all = [...current, ...read];
        if (all.length > MAX_ATTACHMENTS) setProblem(`a prompt may carry at most ${MAX_ATTACHMENTS} files`);
        return all.slice(0, MAX_ATTACHMENTS);
      });
    },
    [enabled],
  );

  const onPaste = useCallback(
    (event: ClipboardEvent) => {
      const pasted = Array.from(event.clipboardData.files);
      // Text pastes stay text; only a paste that carries files is taken here.
      if (pasted.length === 0) return;
      event.preventDefault();
      void add(pasted);
    },
    [add],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (Array.from(event.dataTransfer.types).includes('Files')) event.preventDefault();
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const dropped = Array.from(event.dataTransfer.files);
      if (dropped.length === 0) return;
      event.preventDefault();
      void add(dropped);
    },
    [add],
  );

  return useMemo(
    () => ({
      files,
      problem,
      notice,
      add,
      remove: (id: number) => setFiles((current) => current.filter((file) => file.id !== id)),
      clear: () => {
        setFiles([]);
        setProblem(undefined);
        setNotice(undefined);
      },
      forSend: () => ({
        attachments: files.filter((file) => file.mimeType).map(({ name, data }) => ({ name, data })),
        uploads: files.filter((file) => !file.mimeType).map(({ name, data }) => ({ name, data })),
      }),
      onPaste,
      onDragOver,
      onDrop,
    }),
    [files, problem, notice, add, onPaste, onDragOver, onDrop],
  );
}
