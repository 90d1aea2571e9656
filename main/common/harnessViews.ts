import { z } from 'zod';
import { ApprovalRequest } from './events.js';

/*
 * What the harness answers its hosts beside events: a refusal's code, how a turn ended, an approval's preview,
 * a reviewed file's two versions. The core builds them (main/core/harness); the IPC contract re-exports them,
 * so the renderer, the app and the CLI read one shape. Browser-safe: zod and the event kinds only.
 */

/** What a session is doing, as the list shows it (same values as the session index). */
export const SessionStatus = z.enum(['idle', 'running', 'awaiting_approval', 'interrupted', 'error']);
export type SessionStatus = z.infer<typeof SessionStatus>;

/** Why a call failed, in a form the UI can branch on; `message` is a sentence a person can act on. */
export const ErrorCode = z.enum([
  /** The input did not match the channel's schema. */
  'invalid_input',
  /** No such session, request, compaction or folder. */
  'not_found',
  /** A turn is already running for this session (one at a time). */
  'busy',
  /** Another process (the CLI, another window) holds the session's writer lease. */
  'locked',
  /** The action does not apply in the session's current state (e.g. nothing to resume). */
  'invalid_state',
  /** The feature is not built yet or not offered in this mode (e.g. a native dialog in `keel serve`). */
  'not_available',
  /** The provider refused or could not be reached (test connection, turn setup). */
  'provider',
  /** The user cancelled (a dialog). */
  'cancelled',
  /** The caller is not allowed (a message from a foreign frame or origin). */
  'forbidden',
  /** A bug: main produced something outside the contract or threw unexpectedly. */
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const seq = z.number().int().positive();

/** How a turn ended (mirrors the engine's TurnOutcome, without the pending events). */
export const TurnOutcome = z.discriminatedUnion('status', [
  z.object({ status: z.literal('completed') }),
  z.object({ status: z.literal('awaiting_approval'), pendingSeqs: z.array(seq) }),
  z.object({ status: z.literal('interrupted') }),
  z.object({ status: z.literal('failed'), error: z.string() }),
  z.object({ status: z.literal('budget_exhausted'), steps: z.number().int().nonnegative() }),
  /** A spend cap stopped the turn before a request (#31): the budget_reached event's seq and sentence. */
  z.object({ status: z.literal('budget_reached'), seq, message: z.string() }),
]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

/** A scope kind a decision may take (`path` and `prefix` carry a value: `path:<glob>`, `prefix:<command>`). */
export const ScopeKind = z.enum(['once', 'session', 'tool', 'path', 'prefix', 'domain']);
export type ScopeKind = z.infer<typeof ScopeKind>;

/** What an edit_file / write_file request (or one file of an apply_patch) would do to its file now, for a diff editor. */
export const FileChangePreview = z.object({
  /** Workspace-relative path. */
  path: z.string(),
  /** The file's current text; null when it does not exist yet (or is binary / too large: see the flags). */
  original: z.string().nullable(),
  /** The file's text after the call; null when the call cannot apply, or the file is binary / too large. */
  proposed: z.string().nullable(),
  /** Unified diff of the change (bounded, redacted), or the tool error when it cannot apply. */
  diff: z.string(),
  binary: z.boolean(),
  /** Over the preview limit (4 MB a side): only the diff is given. */
  tooLarge: z.boolean(),
  /** Why the call cannot apply as asked now (e.g. old_string no longer found). */
  error: z.string().optional(),
  /** The file changed since the request: this diff differs from the one recorded with it. */
  changedSinceRequest: z.boolean(),
  /** One file of an apply_patch call: what happens to it (a deleted file's `proposed` is ''). */
  change: z.enum(['added', 'modified', 'deleted', 'moved']).optional(),
  /** A moved file's old path (`*** Move to:`); `path` is the new one. */
  fromPath: z.string().optional(),
});
export type FileChangePreview = z.infer<typeof FileChangePreview>;

/** What a run_command request would run, where, for how long, and what the box lets it touch. */
export const CommandPreview = z.object({
  command: z.string(),
  /** Working directory, workspace-relative (`.` is the workspace root) and absolute. */
  cwd: z.string(),
  cwdPath: z.string(),
  /** The wall-clock limit it runs with (the model's ask, capped), and what the model asked for. */
  timeoutMs: z.number().int().positive(),
  requestedTimeoutMs: z.number().int().positive().optional(),
  timeoutCapped: z.boolean(),
  memoryMb: z.number().int().positive(),
  sandbox: z.object({ kind: z.enum(['bwrap', 'sandbox-exec', 'none']), reason: z.string() }),
  /** Hosts it may reach through the allowlist proxy; empty: no network at all. */
  networkAllow: z.array(z.string()),
  /** Absolute paths it may write (the workspace); everything else is read-only or hidden. */
  writable: z.array(z.string()),
  /** Paths inside the writable ones that stay read-only (git hooks and config, editor and tool folders). */
  readOnly: z.array(z.string()),
  /** Paths it cannot see at all (the Keel home, besides the real home folder). */
  hidden: z.array(z.string()),
});
export type CommandPreview = z.infer<typeof CommandPreview>;

/** One pending approval in full, for the approval panel. */
export const ApprovalPreview = z.object({
  request: ApprovalRequest,
  /** The call's arguments as the model sent them (the log keeps them redacted); null when not a JSON object. */
  arguments: z.record(z.string(), z.unknown()).nullable(),
  /** Why the path is protected (.git, .vscode, a protected glob...), when that is why it asks. */
  protectedReason: z.string().nullable(),
  /** The scopes approvals.decide accepts for this request (`once` only for a call whose outcome is unknown). */
  allowedScopes: z.array(ScopeKind),
  /** Pre-filled, editable: `path:<folder>/**` for a file, `prefix:<first words>` for a command. */
  suggested: z.object({
    path: z.string().optional(),
    prefix: z.string().optional(),
    /** web_fetch (issue #32): `domain:<the request's host>`. */
    domain: z.string().optional(),
  }),
  file: FileChangePreview.optional(),
  /** An apply_patch call: every file it changes, in patch order (`file` is then absent). */
  files: z.array(FileChangePreview).optional(),
  command: CommandPreview.optional(),
});
export type ApprovalPreview = z.infer<typeof ApprovalPreview>;

/** One file's two versions, for a diff editor; null stands for "absent" (or binary / too large: see the flags). */
export const FileVersions = z.object({
  dir: z.string(),
  path: z.string(),
  change: z.enum(['added', 'modified', 'deleted']),
  /** Before: the project folder's file (uncommitted changes), or the folder's file before the commit. */
  original: z.string().nullable(),
  /** After: the session's checkout file, or the folder's file as the commit left it. */
  modified: z.string().nullable(),
  binary: z.boolean(),
  tooLarge: z.boolean(),
  /** Why the texts are missing (the file changed since the commit, binary...), in words. */
  note: z.string().optional(),
  /** The file's part of the commit's patch, when the texts could not be rebuilt. */
  patch: z.string().optional(),
});
export type FileVersions = z.infer<typeof FileVersions>;
