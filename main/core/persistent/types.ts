import type { FileMode } from '../../common/events.js';
import { z } from 'zod';

/** When a session's changes to a Persistent Dir reach its backing folder. */
export const CommitModel = z.enum(['auto', 'manual']);
export type CommitModel = z.infer<typeof CommitModel>;

/** A Persistent Dir's name: one folder under `persistent/`, the same on every OS. */
export const PersistentDirName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
  )
  .refine((name) => !name.endsWith('.'), 'a name cannot end with "."');

/** One Persistent Dir of a session: its name, the absolute backing folder, and its commit model. */
export const PersistentDirSpec = z.object({
  name: PersistentDirName,
  path: z.string().min(1),
  commit: CommitModel,
});
export type PersistentDirSpec = z.infer<typeof PersistentDirSpec>;

/** One file a commit wrote (or found already written) in the backing folder. */
export type CommittedFile = {
  /** Path relative to the Persistent Dir, with `/`. */
  path: string;
  /** sha256 of the backing file before the commit; null when it did not exist. */
  preHash: string | null;
  /** sha256 after; null when the commit deleted it. */
  postHash: string | null;
  /** The backing file had changed since the checkout too, and the two versions were merged. */
  merged?: boolean;
  /** Modes before and after, set when the bytes of that side were kept in the history store (kept.ts). */
  preMode?: FileMode;
  postMode?: FileMode;
};

/**
 * What one commit of one Persistent Dir did. `committed`: files written (and a diff artifact);
 * `unchanged`: the session changed nothing; `conflict`: nothing was written, `conflicts` names the
 * files both sides changed incompatibly and `patchArtifact` keeps the session's version as a patch.
 */
export type CommitReport = (
  | { dir: string; status: 'unchanged' }
  | { dir: string; status: 'committed'; files: CommittedFile[]; diffArtifact: string }
  | { dir: string; status: 'conflict'; conflicts: string[]; patchArtifact: string }
) & {
  /**
   * Protected paths the session changed that this commit held back (heldBack.ts), with their diff; when
   * the repository's git metadata changed since the turn began, every change is held and
   * `gitMetadataChanges` names what changed there ("<path> added|removed|changed").
   */
  held?: { files: HeldFile[]; diff: string; gitMetadataChanges?: string[] };
  /** Git repositories the session made inside the checkout (nestedRepos.ts): their files, held for approval. */
  nested?: NestedHold;
  /** Held-back files granted before this commit: those it wrote, and those the backing folder changed meanwhile. */
  applied?: { files: CommittedFile[]; conflicts: string[] };
};

/** A path the session changed in its checkout and has not committed. */
export type UncommittedFile = { path: string; status: 'added' | 'modified' | 'deleted' };

/** Thrown when a Persistent Dir cannot be checked out; the message says what to fix. */
export class PersistentDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PersistentDirError';
  }
}

/** A protected path's change a commit held back: what it was, what the session made of it, and why. */
export type HeldFile = {
  path: string;
  reason: string;
  status: 'added' | 'modified' | 'deleted';
  oldOid: string;
  newOid: string;
  newMode: string;
};

/** What holding the nested repositories of one commit found. */
export type NestedHold = {
  /** The repositories' folders (relative, with a trailing `/`). */
  repos: string[];
  /** Their files, kept as artifacts; written to the backing folder only once granted (applyDirect). */
  files: DirectHeldFile[];
  /** Files not kept (over 1 MiB, past 200 files, or not a file or link): named in the request. */
  skipped: string[];
  diff: string;
};

/** A protected path a direct turn changed and that was put back; `artifact` holds the turn's version. */
export type DirectHeldFile = {
  path: string;
  reason: string;
  status: 'added' | 'modified' | 'deleted';
  /** The turn's version: absent when the turn deleted the path. */
  after?: { kind: 'file'; mode: number; sha256: string; artifact: string } | { kind: 'link'; target: string };
  /** What was there before (and was put back), to check before writing the turn's version. */
  beforeSha256?: string | null;
};

/** A Persistent Dir's uncommitted changes. */
export type UncommittedDir = {
  dir: string;
  commit: CommitModel;
  readOnly: boolean;
  files: UncommittedFile[];
};
