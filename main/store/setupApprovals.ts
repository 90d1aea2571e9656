import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { appendJsonlEvent, readJsonlEvents } from './appendOnlyJsonl.js';

/**
 * `<home>/setup-approvals.jsonl`: one event per line, appended when a person approves what a project folder
 * brings (its `.claude/`, `.agents/`, `.keel/`, `.codex/` setup files, each by its sha256) or revokes that
 * approval. A project file is trusted while the project's newest event approves exactly the hash the file has
 * now: a changed or added file asks again. Nothing is ever rewritten.
 */
export const SetupApprovalEvent = z.object({
  kind: z.enum(['setup_approved', 'setup_revoked']),
  /** Real path of the project folder. */
  project: z.string().min(1),
  /** Every file approved, by its path relative to the project and the sha256 (hex) of its bytes. */
  files: z
    .array(
      z.object({
        path: z.string().min(1),
        hash: z.string().regex(/^[0-9a-f]{64}$/),
        size: z.number().int().nonnegative(),
      }),
    )
    .default([]),
  /** Who approved: `keel trust --approve`, the settings screen. */
  via: z.string().min(1),
  at: z.string().min(1),
});
export type SetupApprovalEvent = z.infer<typeof SetupApprovalEvent>;

const FILE = 'setup-approvals.jsonl';
/** The approved bytes, by their sha256, so a later change is shown as a diff against what was approved. */
const BLOBS = 'setup-approved';
/** Bigger files are approved by hash only (their diff says "changed" without the lines). */
export const MAX_KEPT_BYTES = 512 * 1024;

/** Appends one approval event (one `O_APPEND` line: concurrent writers never interleave). */
export function appendSetupApproval(
  home: string,
  event: Omit<z.input<typeof SetupApprovalEvent>, 'at'>,
): SetupApprovalEvent {
  return appendJsonlEvent(home, FILE, SetupApprovalEvent, event);
}

/** Every approval event, oldest first; a line that is not a valid event is skipped (it approves nothing). */
export function readSetupApprovals(home: string): SetupApprovalEvent[] {
  return readJsonlEvents(home, FILE, SetupApprovalEvent);
}

/**
 * The files (relative path → sha256) the project's newest event approves, with that event; null when it was
 * never approved or the newest event revokes. Pure.
 */
export function approvedSetup(
  events: readonly SetupApprovalEvent[],
  project: string,
): { hashes: Map<string, string>; event: SetupApprovalEvent } | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SetupApprovalEvent;
    if (event.project !== project) continue;
    if (event.kind === 'setup_revoked') return null;
    return { hashes: new Map(event.files.map((file) => [file.path, file.hash])), event };
  }
  return null;
}

/** Keeps approved bytes under their sha256 (written before the approval event that names them). */
export function keepApprovedBytes(home: string, bytes: Buffer): void {
  if (bytes.length > MAX_KEPT_BYTES) return;
  const hash = createHash('sha256').update(bytes).digest('hex');
  const folder = path.join(home, BLOBS);
  const file = path.join(folder, hash);
  if (fs.existsSync(file)) return;
  fs.mkdirSync(folder, { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, bytes, { mode: 0o600 });
  fs.renameSync(temp, file);
}

/** The approved bytes of `hash`, or undefined when they were not kept (too big) or do not match the hash. */
export function readApprovedBytes(home: string, hash: string): Buffer | undefined {
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  try {
    const bytes = fs.readFileSync(path.join(home, BLOBS, hash));
    return createHash('sha256').update(bytes).digest('hex') === hash ? bytes : undefined;
  } catch {
    return undefined;
  }
}
