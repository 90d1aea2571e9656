import { z } from 'zod';
import { ApprovalScope, Policy, ProviderKind } from '../../common/events.js';
import { ErrorCode, seq, SessionStatus } from '../../common/harnessViews.js';
import { ModelOverride } from '../../common/models.js';
import { NotificationSettings } from '../../common/notifications.js';
import { Appearance, OpenAiEndpoints } from '../../common/appSettings.js';
/** Issue #37: the theme choices, for the renderer. */
export type { Theme } from '../../common/appSettings.js';
export { endpointKeyOf } from '../../common/appSettings.js';

/** The event kinds and the pieces of them the UI needs, re-exported so the renderer imports only this file. */
export {
  ApprovalScope,
  EVENT_KINDS,
  ModelPin,
  Policy,
  ProviderKind,
  SessionEvent,
  ToolCall,
  ToolMode,
  Usage,
} from '../../common/events.js';
export type { EventKind, EventOf, ToolImage } from '../../common/events.js';
/** Which stop reasons the transcript states as a notice (a refusal, a content filter, the output limit). */
export { unusualStop, type UnusualStop } from '../../common/stopReasons.js';
// issue #32: when a turn's end notifies
export { NotificationSettings, turnNotification } from '../../common/notifications.js';
// issue #32: what the composer checks of a file before sending, and says of a model without vision
export {
  type AttachmentMimeType,
  looksLikeSvg,
  MAX_APP_UPLOAD_BYTES,
  MAX_ATTACHMENTS,
  MAX_IMAGE_BYTES,
  MAX_PDF_BYTES,
  sniffAttachmentType,
  unshownAttachmentsWarning,
} from '../../common/attachments.js';
/** What the harness answers beside events (refusal codes, turn outcomes, approval previews, reviewed files). */
export {
  ApprovalPreview,
  CommandPreview,
  ErrorCode,
  FileChangePreview,
  FileVersions,
  ScopeKind,
  seq,
  SessionStatus,
  TurnOutcome,
} from '../../common/harnessViews.js';
/** The trace summary's types, for the traces and cost views. */
export type * from '../../common/traceSchema.js';
/** Where the money went (#31): `keel cost`'s report, for the session header and the trace view. */
export type * from '../../common/costSchema.js';

/**
 * The one contract between the UI and main: every channel's input and output schema, every pushed
 * event's schema, and the `KeelApi` type that both the Electron preload and the `keel serve` browser
 * bridge implement. The renderer imports this file for types only; it may import nothing but zod, the
 * event kinds and the trace summary schema, because it is compiled for the browser too (tsconfig.web.json).
 */

/** Where a model is in its provider's lifecycle (the catalogue's ModelStatus). */
export { ModelStatus } from '../../common/models.js';

/** A provider's models endpoint as last read: when, and how many it listed (its list is the truth). */
export const ServedListSummary = z.object({
  provider: ProviderKind,
  /** Absent for the provider's default endpoint. */
  baseUrl: z.string().optional(),
  /** ISO time of the read. */
  fetchedAt: z.string(),
  /** How old the list is by main's clock, in words ("3 h ago"). */
  age: z.string(),
  /** Older than an hour: worth reading again. */
  stale: z.boolean(),
  count: z.number().int().nonnegative(),
});
export type ServedListSummary = z.infer<typeof ServedListSummary>;

/** The error half of every channel's result. */
export const IpcError = z.object({ code: ErrorCode, message: z.string() });
export type IpcError = z.infer<typeof IpcError>;

/** Every channel resolves to this; nothing is ever thrown across the bridge. */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: IpcError };

/** Builds the result schema of a channel from its output schema. */
export function resultSchema<T extends z.ZodType>(value: T) {
  return z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), value }),
    z.object({ ok: z.literal(false), error: IpcError }),
  ]);
}

export const sessionId = z.string().min(1).max(200);
export const folder = z.string().min(1).max(4096);

/** One session as the list shows it. Times are ISO-8601 strings. */
export const SessionSummary = z.object({
  id: z.string(),
  title: z.string().optional(),
  projectFolder: z.string(),
  /** False when the project folder no longer exists: the session opens read-only. */
  projectExists: z.boolean(),
  provider: z.string(),
  model: z.string(),
  /** `running` only while some live process runs a turn; a dead runner's session shows `interrupted`. */
  status: SessionStatus,
  parentId: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  eventCount: z.number().int().nonnegative(),
  lastSeq: z.number().int().nonnegative(),
  archived: z.boolean(),
  /** With a search: the newest matching message text, the matches in [brackets]. */
  snippet: z.string().optional(),
  /**
   * Set in `sessions.list` on a session whose running turn appended this many events that its counts and
   * the search do not cover yet (the index catches up when the turn ends); absent when caught up.
   */
  indexBehind: z.number().int().positive().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

/** A project folder as the session browser groups by it. */
export const ProjectGroup = z.object({
  folder: z.string(),
  exists: z.boolean(),
  /** Newest activity among the page's sessions of this folder. */
  lastActivity: z.string(),
  /** How many of the page's sessions belong to it (in page order). */
  sessionIds: z.array(z.string()),
});
export type ProjectGroup = z.infer<typeof ProjectGroup>;

/** A pushed text or reasoning delta, or the start of a streamed tool call. */
export const Delta = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('reasoning'), text: z.string() }),
  z.object({ type: z.literal('tool_call'), id: z.string(), name: z.string() }),
]);
export type Delta = z.infer<typeof Delta>;

/** Whether an API key is configured for each provider (never the key itself). */
export const KeyPresence = z.object({
  anthropic: z.boolean(),
  openai: z.boolean(),
  openaiCompatible: z.boolean(),
});
/** A provider key's name in settings.set / settings.get (`openaiCompatible` for openai-compatible). */
export type KeyName = keyof z.infer<typeof KeyPresence>;

/** settings.json as the UI edits it (same shape as main/store/settings.ts; keys are never in it). */
export const SettingsValue = z.object({
  defaults: z.object({
    provider: ProviderKind.optional(),
    model: z.string().min(1).optional(),
    baseUrl: z.string().url().optional(),
    policy: Policy.optional(),
    networkAllow: z.array(z.string().min(1)).optional(),
  }),
  contextWindows: z.record(z.string(), z.number().int().positive()),
  /** Corrections and additions to the model catalogue; absent in settings.set keeps the file's. */
  models: z.record(z.string().min(1), ModelOverride).optional(),
  providers: z.object({
    anthropic: z.object({ baseUrl: z.string().url().optional() }).optional(),
    openai: z.object({ baseUrl: z.string().url().optional() }).optional(),
    'openai-compatible': z.object({ baseUrl: z.string().url().optional() }).optional(),
    // Issue 34: every provider kind has an entry; a local model has no endpoint.
    local: z.object({ baseUrl: z.string().url().optional() }).optional(),
  }),
  compaction: z.object({ threshold: z.number().min(0).max(0.95), keepRecent: z.number().min(0).max(0.5) }),
  /** Issue #32: which turn endings notify while the window is unfocused; absent in settings.set keeps the file's. */
  notifications: NotificationSettings.optional(),
  /** Issue #36: the bound of checkout storage; absent in settings.set keeps the file's. */
  checkouts: z
    .object({
      storageLimitMB: z.number().int().min(0),
      idleMinutes: z.number().min(0),
      kind: z.enum(['auto', 'copy', 'view']).optional(),
    })
    .optional(),
  /** Issue #37: named OpenAI-compatible endpoints; absent in settings.set keeps the file's. */
  endpoints: OpenAiEndpoints.optional(),
  /** Issue #37: the theme; absent in settings.set keeps the file's. */
  appearance: Appearance.optional(),
});
export type SettingsValue = z.infer<typeof SettingsValue>;

/** What settings.get returns: the file, which keys are set, and where keys are kept. */
export const SettingsView = z.object({
  settings: SettingsValue,
  keys: KeyPresence,
  /** Issue #37: the OpenAI-compatible endpoints (base URLs as stored: endpointKeyOf) with a key of their own. */
  endpointKeys: z.array(z.string()),
  /**
   * `keychain`: the key file sealed by the OS keychain (Electron's safeStorage); `file`: `keel serve` keeps keys
   * typed in the page in the home's key file, sealed by the home's 0600 key (over the environment's);
   * `environment`: read-only, from env vars.
   */
  keyStorage: z.enum(['keychain', 'file', 'environment']),
});
export type SettingsView = z.infer<typeof SettingsView>;

/** A compaction as the list shows it. */
export const CompactionSummary = z.object({
  seq,
  at: z.string(),
  /** First and last seq of the original events it replaces (they stay in the log: page them with events.page). */
  fromSeq: seq,
  through: seq,
  tokensBefore: z.number().int().nonnegative().optional(),
  tokensAfter: z.number().int().nonnegative().optional(),
  model: z.string().optional(),
  /** Seq of the compaction this one re-ran. */
  supersedes: seq.optional(),
  /** `in_effect`: the projection uses it now; `superseded`: a later compaction covers as much or more. */
  status: z.enum(['in_effect', 'superseded']),
  /** The later compaction that took its place. */
  supersededBy: seq.optional(),
  /** True when status is `superseded` (both stay in the log). */
  superseded: z.boolean(),
});
export type CompactionSummary = z.infer<typeof CompactionSummary>;

/** One changed file of a Persistent Dir checkout. */
export const PersistentFileChange = z.object({
  path: z.string(),
  change: z.enum(['added', 'modified', 'deleted']),
});

/** What committing one Persistent Dir did (nothing is written on a conflict; the session's version is kept as a patch). */
export const PersistentCommitReport = z.discriminatedUnion('status', [
  z.object({ dir: z.string(), status: z.literal('unchanged') }),
  z.object({
    dir: z.string(),
    status: z.literal('committed'),
    files: z.array(z.object({ path: z.string(), merged: z.boolean() })),
    /** Artifact handle of the diff that was applied. */
    diffArtifact: z.string(),
  }),
  z.object({
    dir: z.string(),
    status: z.literal('conflict'),
    conflicts: z.array(z.string()),
    patchArtifact: z.string(),
  }),
]);
export type PersistentCommitReport = z.infer<typeof PersistentCommitReport>;

/** A command from the desktop shell to the UI (menu entries, a folder passed on the command line). */
export const AppCommand = z.discriminatedUnion('command', [
  /** Start a new session, on this folder when given (menu Open Folder, `keel-app /path/to/project`). */
  z.object({ command: z.literal('newSession'), folder: z.string().optional() }),
  z.object({ command: z.literal('openSettings') }),
  z.object({ command: z.literal('focusSearch') }),
]);
export type AppCommand = z.infer<typeof AppCommand>;

/** A grant wider than `once` as the approvals panel lists it: what it allows, when, and its revocation if any. */
export const GrantRecord = z.object({
  /** Seq of the approval_granted event (what grants.revoke names). */
  seq,
  requestSeq: seq,
  tool: z.string(),
  scope: ApprovalScope,
  grantedAt: z.string(),
  /** The model's call id of the request the grant answered. */
  toolCallId: z.string(),
  /** One sentence: which future calls it pre-authorises. */
  allows: z.string(),
  revoked: z.object({ seq, at: z.string(), reason: z.string().optional() }).optional(),
});
export type GrantRecord = z.infer<typeof GrantRecord>;

/** A payload rendered as text (`--- role ---` headers, as `keel payload` prints it), for a diff editor. */
export const PayloadText = z.object({
  text: z.string(),
  messageCount: z.number().int().nonnegative(),
});

/** What a new turn does to a dir's uncommitted changes: auto dirs commit them first, manual dirs refuse the turn, read-only dirs discard them. */
export const NewTurnEffect = z.enum(['commit', 'refuse', 'discard']);

/** An interactive terminal of this process. */
export const TerminalInfo = z.object({
  terminalId: z.string(),
  sessionId: z.string(),
  openedAt: z.string(),
  /** Opened by this connection (the others' terminals are listed, their output is pushed to everyone). */
  mine: z.boolean(),
});
export type TerminalInfo = z.infer<typeof TerminalInfo>;

/** How an interactive terminal ended. */
export const TerminalExit = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** True when terminal.kill (or session delete, disconnect, shutdown) ended it. */
  killed: z.boolean(),
});

/** A channel: its input schema, its output schema and a one-line doc. */
export type ChannelSpec = { input: z.ZodType; output: z.ZodType; doc: string };

export const empty = z.object({}).strict();
