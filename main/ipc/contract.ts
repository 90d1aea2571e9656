import { z } from 'zod';
import {
  ApprovalRequest,
  ApprovalScope,
  Compaction,
  ModelPin,
  Policy,
  ProviderKind,
  SessionEvent,
  ToolMode,
} from '../common/events.js';
import { SessionTraceSummarySchema } from '../common/traceSchema.js';
import { ModelOverride, ModelStatus, UtcDay } from '../common/models.js';

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
} from '../common/events.js';
export type { EventKind, EventOf } from '../common/events.js';
/** The trace summary's types, for the traces and cost views. */
export type {
  SessionTraceSummary,
  StageKind,
  SubagentTrace,
  TimelineStage,
  TokenCounts,
  TokensAndCost,
  TurnPoint,
  TurnTraceSummary,
} from '../common/traceSchema.js';

/**
 * The one contract between the UI and main: every channel's input and output schema, every pushed
 * event's schema, and the `KeelApi` type that both the Electron preload and the `keel serve` browser
 * bridge implement. The renderer imports this file for types only; it may import nothing but zod, the
 * event kinds and the trace summary schema, because it is compiled for the browser too (tsconfig.web.json).
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

/** Where a model is in its provider's lifecycle (the catalogue's ModelStatus). */
export { ModelStatus } from '../common/models.js';

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

const sessionId = z.string().min(1).max(200);
const seq = z.number().int().positive();
const folder = z.string().min(1).max(4096);

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

/** A pushed text delta or the start of a streamed tool call. */
export const Delta = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_call'), id: z.string(), name: z.string() }),
]);
export type Delta = z.infer<typeof Delta>;

/** How a turn ended (mirrors the engine's TurnOutcome, without the pending events). */
export const TurnOutcome = z.discriminatedUnion('status', [
  z.object({ status: z.literal('completed') }),
  z.object({ status: z.literal('awaiting_approval'), pendingSeqs: z.array(seq) }),
  z.object({ status: z.literal('interrupted') }),
  z.object({ status: z.literal('failed'), error: z.string() }),
  z.object({ status: z.literal('budget_exhausted'), steps: z.number().int().nonnegative() }),
]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

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
  }),
  compaction: z.object({ threshold: z.number().min(0).max(0.95), keepRecent: z.number().min(0).max(0.5) }),
});
export type SettingsValue = z.infer<typeof SettingsValue>;

/** What settings.get returns: the file, which keys are set, and where keys are kept. */
export const SettingsView = z.object({
  settings: SettingsValue,
  keys: KeyPresence,
  /** `keychain`: safeStorage (Electron); `environment`: read-only, from env vars (`keel serve`). */
  keyStorage: z.enum(['keychain', 'environment']),
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

/** A scope kind a decision may take (`path` and `prefix` carry a value: `path:<glob>`, `prefix:<command>`). */
export const ScopeKind = z.enum(['once', 'session', 'path', 'prefix']);
export type ScopeKind = z.infer<typeof ScopeKind>;

/** What an edit_file / write_file request would do to its file now, for a diff editor. */
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
  suggested: z.object({ path: z.string().optional(), prefix: z.string().optional() }),
  file: FileChangePreview.optional(),
  command: CommandPreview.optional(),
});
export type ApprovalPreview = z.infer<typeof ApprovalPreview>;

/** A payload rendered as text (`--- role ---` headers, as `keel payload` prints it), for a diff editor. */
export const PayloadText = z.object({
  text: z.string(),
  messageCount: z.number().int().nonnegative(),
});

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
type ChannelSpec = { input: z.ZodType; output: z.ZodType; doc: string };

const empty = z.object({}).strict();

/** Every channel the UI can call. Adding one here adds it to the preload, the ws bridge and the handler table's type. */
export const channels = {
  'sessions.list': {
    doc: 'Sessions newest first (paged, optional full-text search over titles and message text), with project groups.',
    input: z.object({
      limit: z.number().int().min(1).max(1000).default(100),
      offset: z.number().int().nonnegative().default(0),
      search: z.string().max(1000).optional(),
      projectFolder: folder.optional(),
      includeArchived: z.boolean().default(false),
    }),
    output: z.object({
      sessions: z.array(SessionSummary),
      /** The page's project folders in order of their newest session. */
      projects: z.array(ProjectGroup),
      /** True when another page may follow (the page was full). */
      hasMore: z.boolean(),
    }),
  },
  'sessions.create': {
    doc: 'Creates a session on a project folder with its pinned model, policy and network allowlist; nothing runs yet.',
    input: z.object({
      projectFolder: folder,
      provider: ProviderKind,
      model: z.string().min(1),
      baseUrl: z.string().url().optional(),
      /** Defaults to settings.contextWindows[model], else the catalogue's; unknown models must give it. */
      contextWindow: z.number().int().positive().optional(),
      policy: Policy.default('ask'),
      toolMode: ToolMode.default('write'),
      networkAllow: z.array(z.string().min(1)).default([]),
      title: z.string().max(500).optional(),
      /**
       * How changes reach the project folder: `auto` (the default) works on a checkout and commits the changes
       * when each turn ends, `manual` keeps them for review (persistent.diff / apply / discard), `direct` works
       * in the folder itself (no checkout).
       */
      checkout: z.enum(['auto', 'manual', 'direct']).default('auto'),
    }),
    output: z.object({
      session: SessionSummary,
      /** Set when the model works today but its lifecycle says it may not for long (one line). */
      warning: z.string().optional(),
    }),
  },
  'sessions.open': {
    doc: 'Everything the session view needs besides events: summary, pinned model, policy, status, pending approvals, context use.',
    input: z.object({ sessionId }),
    output: z.object({
      session: SessionSummary,
      pin: ModelPin,
      policy: Policy,
      toolMode: ToolMode,
      networkAllow: z.array(z.string()),
      /** The session's Persistent Dir checkouts (empty: it works on its project folder directly). */
      persistentDirs: z.array(
        z.object({ dir: z.string(), commit: z.enum(['auto', 'manual']), readOnly: z.boolean() }),
      ),
      /** True when a turn of this session runs in this process (Stop applies). */
      running: z.boolean(),
      /** True when the project folder is gone or another process holds the lease: no sending. */
      readOnly: z.boolean(),
      /** Last turn was interrupted or crashed: Resume applies. */
      canResume: z.boolean(),
      pendingApprovals: z.array(ApprovalRequest),
      context: z.object({
        /** Tokens of the last request (input + output) since the newest compaction; null before any. */
        usedTokens: z.number().int().nonnegative().nullable(),
        window: z.number().int().positive(),
        /** Tokens at which automatic compaction triggers; null when it is off. */
        compactAt: z.number().int().nonnegative().nullable(),
      }),
    }),
  },
  'sessions.rename': {
    doc: 'Sets the title shown in the list.',
    input: z.object({ sessionId, title: z.string().min(1).max(500) }),
    output: z.object({ session: SessionSummary }),
  },
  'sessions.setModel': {
    doc: "Switches an idle session's pinned model (recorded as model_changed); the next request uses it.",
    input: z.object({
      sessionId,
      provider: ProviderKind,
      model: z.string().min(1),
      /** Defaults to the session's own base URL when the provider stays, else the provider's in settings. */
      baseUrl: z.string().url().optional(),
      /** Defaults to settings.contextWindows[model], else the catalogue's; unknown models must give it. */
      contextWindow: z.number().int().positive().optional(),
    }),
    output: z.object({
      pin: ModelPin,
      previous: ModelPin,
      /** Set when the model works today but its lifecycle says it may not for long (one line). */
      warning: z.string().optional(),
    }),
  },
  'sessions.archive': {
    doc: 'Hides (archived: true) or restores a session in the list; its log is untouched.',
    input: z.object({ sessionId, archived: z.boolean().default(true) }),
    output: z.object({ session: SessionSummary }),
  },
  'sessions.delete': {
    doc: 'Deletes a session and its folder for good; `confirm` must repeat the session id.',
    input: z.object({ sessionId, confirm: z.string() }).refine((value) => value.confirm === value.sessionId, {
      message: 'confirm must repeat the session id',
      path: ['confirm'],
    }),
    output: z.object({ deleted: z.literal(true) }),
  },
  'events.page': {
    doc: 'A page of a session log in seq order: from `fromSeq` forwards, or the `limit` events before `beforeSeq` (default: the newest).',
    input: z.object({
      sessionId,
      fromSeq: seq.optional(),
      toSeq: seq.optional(),
      beforeSeq: seq.optional(),
      limit: z.number().int().min(1).max(5000).default(500),
    }),
    output: z.object({
      events: z.array(SessionEvent),
      /** The log's last seq when read (0 when empty). */
      lastSeq: z.number().int().nonnegative(),
      /** Events exist before the page's first one. */
      hasBefore: z.boolean(),
      /** Events exist after the page's last one. */
      hasAfter: z.boolean(),
    }),
  },
  'turns.send': {
    doc: 'Starts a turn with a prompt; resolves once it started (progress is pushed). `busy` if one runs.',
    input: z.object({
      sessionId,
      prompt: z.string().min(1).max(1_000_000),
      /**
       * A new turn resets the session's checkouts: with uncommitted manual changes it is refused
       * (`invalid_state`) unless this is true, which discards them first (persistent.diff's newTurnWarning).
       */
      discardChanges: z.boolean().default(false),
    }),
    output: z.object({ turnId: z.string() }),
  },
  'turns.stop': {
    doc: 'Stops the running turn (partial text recorded as interrupted; another process is asked via its stop file); `stopped: false` if none ran.',
    input: z.object({ sessionId }),
    output: z.object({ stopped: z.boolean() }),
  },
  'turns.resume': {
    doc: 'Continues an interrupted, crashed or approved turn from the log; resolves once it started.',
    input: z.object({ sessionId }),
    output: z.object({ turnId: z.string() }),
  },
  'approvals.list': {
    doc: 'The pending approval requests of a session, oldest first.',
    input: z.object({ sessionId }),
    output: z.object({ pending: z.array(ApprovalRequest) }),
  },
  'approvals.decide': {
    doc: 'Grants (with a scope) or denies (with a reason) one pending request; with resume (default) the turn continues.',
    input: z.discriminatedUnion('decision', [
      z.object({
        sessionId,
        requestSeq: seq,
        decision: z.literal('grant'),
        scope: ApprovalScope,
        resume: z.boolean().default(true),
      }),
      z.object({
        sessionId,
        requestSeq: seq,
        decision: z.literal('deny'),
        reason: z.string().max(10_000).optional(),
        resume: z.boolean().default(true),
      }),
    ]),
    output: z.object({
      event: SessionEvent,
      /** Set when the decision resumed the turn. */
      turnId: z.string().optional(),
    }),
  },
  'approvals.preview': {
    doc: 'One pending request in full: arguments, reason, protection, allowed scopes, the file change (original and proposed text) or the command and its box.',
    input: z.object({ sessionId, requestSeq: seq }),
    output: ApprovalPreview,
  },
  'grants.list': {
    doc: 'The grants of a session wider than once, oldest first: in effect, or with includeRevoked also the revoked ones.',
    input: z.object({ sessionId, includeRevoked: z.boolean().default(false) }),
    output: z.object({ grants: z.array(GrantRecord) }),
  },
  'grants.revoke': {
    doc: 'Revokes a grant in effect (records approval_revoked): the calls it covered ask again. `busy` while a turn runs.',
    input: z.object({ sessionId, grantSeq: seq, reason: z.string().max(10_000).optional() }),
    output: z.object({ event: SessionEvent, grant: GrantRecord }),
  },
  'trace.summary': {
    doc: "A session's trace: per-turn timelines (stages, tool calls, approval waits, retries), tokens and cost, totals, cache hit rate, subagents nested.",
    input: z.object({ sessionId, maxDepth: z.number().int().min(0).max(10).optional() }),
    output: z.object({ summary: SessionTraceSummarySchema }),
  },
  'commands.kill': {
    doc: "Kills a running command's whole process tree; the turn goes on with its (killed) result. `invalid_state` if it is not running here.",
    input: z.object({ sessionId, toolCallId: z.string().min(1).max(500) }),
    output: z.object({ killed: z.literal(true) }),
  },
  'artifacts.read': {
    doc: "A page of an artifact's text (a command's whole output, a commit's patch), never cut inside a character: replays a finished run.",
    input: z.object({
      sessionId,
      /** As tool_result.artifact or persistent_commit.diffArtifact name it (relative to the session's artifacts). */
      handle: z.string().min(1).max(1000),
      /** Byte offset: 0, then the previous page's nextOffset. */
      offset: z.number().int().nonnegative().default(0),
      maxBytes: z
        .number()
        .int()
        .min(4096)
        .max(4 * 1024 * 1024)
        .default(1024 * 1024),
    }),
    output: z.object({
      handle: z.string(),
      /** Bytes in the artifact when read (a running command's still grows). */
      size: z.number().int().nonnegative(),
      offset: z.number().int().nonnegative(),
      nextOffset: z.number().int().nonnegative(),
      text: z.string(),
      eof: z.boolean(),
    }),
  },
  'tool.watch': {
    doc: "This connection renders the session's live command output and acks it (tool.outputAck): commands pause while it falls behind.",
    input: z.object({ sessionId }),
    output: z.object({ watching: z.literal(true) }),
  },
  'tool.unwatch': {
    doc: "Stops flow-controlling the session's command output for this connection (paused commands resume).",
    input: z.object({ sessionId }),
    output: z.object({ watching: z.literal(false) }),
  },
  'tool.outputAck': {
    doc: "Acks `chars` (UTF-16 code units, chunk.length) of a command's tool.output as rendered; returns what is still unacked.",
    input: z.object({
      sessionId,
      toolCallId: z.string().min(1).max(500),
      chars: z.number().int().positive(),
    }),
    output: z.object({ unackedChars: z.number().int().nonnegative() }),
  },
  'terminal.open': {
    doc: "Opens the user's interactive shell in the session's workspace, in the same box as commands; output is pushed as terminal.data.",
    input: z.object({
      sessionId,
      cols: z.number().int().min(2).max(1000).default(120),
      rows: z.number().int().min(2).max(1000).default(30),
      /** Without an OS sandbox the shell would run unconfined: refused unless the user approved exactly that. */
      unconfined: z.boolean().default(false),
    }),
    output: z.object({
      terminalId: z.string(),
      /** Where the shell starts, workspace-relative (`persistent/project` for a checkout session). */
      cwd: z.string(),
      sandbox: z.enum(['bwrap', 'sandbox-exec', 'none']),
    }),
  },
  'terminal.write': {
    doc: 'Sends keystrokes or pasted text to a terminal.',
    input: z.object({ terminalId: z.string().min(1), data: z.string().min(1).max(1_000_000) }),
    output: z.object({}),
  },
  'terminal.resize': {
    doc: "Resizes a terminal's pty (the shell gets SIGWINCH).",
    input: z.object({
      terminalId: z.string().min(1),
      cols: z.number().int().min(2).max(1000),
      rows: z.number().int().min(2).max(1000),
    }),
    output: z.object({}),
  },
  'terminal.ack': {
    doc: "Acks `chars` (chunk.length) of a terminal's output as rendered; the shell pauses past 100,000 unacked characters.",
    input: z.object({ terminalId: z.string().min(1), chars: z.number().int().positive() }),
    output: z.object({}),
  },
  'terminal.kill': {
    doc: 'Kills a terminal and every process it started; resolves with how it ended.',
    input: z.object({ terminalId: z.string().min(1) }),
    output: TerminalExit,
  },
  'terminal.list': {
    doc: 'The interactive terminals open in this process (of one session, or all).',
    input: z.object({ sessionId: sessionId.optional() }),
    output: z.object({ terminals: z.array(TerminalInfo) }),
  },
  'compactions.list': {
    doc: 'The compactions of a session, oldest first.',
    input: z.object({ sessionId }),
    output: z.object({ compactions: z.array(CompactionSummary) }),
  },
  'compactions.inspect': {
    doc: 'One compaction: its summary, pinned goal and the range of original events it replaces.',
    input: z.object({ sessionId, seq }),
    output: z.object({
      compaction: Compaction,
      summary: CompactionSummary,
      /** How many original events the summary stands for (they stay in the log). */
      replacedCount: z.number().int().nonnegative(),
    }),
  },
  'compactions.payload': {
    doc: 'The payload the next turn would send now, and the same payload rebuilt without compaction `seq`, as text for a diff editor.',
    input: z.object({ sessionId, seq }),
    output: z.object({ current: PayloadText, without: PayloadText }),
  },
  'compactions.run': {
    doc: 'Compacts the session now from its original events (or re-runs compaction `rerun` over the same range); `busy` while a turn runs.',
    input: z.object({ sessionId, rerun: seq.optional() }),
    output: z.discriminatedUnion('status', [
      z.object({ status: z.literal('compacted'), compaction: Compaction }),
      /** Nothing old enough to summarize yet. */
      z.object({ status: z.literal('skipped'), reason: z.string() }),
    ]),
  },
  'persistent.diff': {
    doc: "The uncommitted changes of the session's Persistent Dir checkouts (all, or one dir), with a unified diff against the project folder.",
    input: z.object({ sessionId, dir: z.string().min(1).optional() }),
    output: z.object({
      /** False for a session that works on its project folder directly (nothing to review). */
      hasCheckouts: z.boolean(),
      dirs: z.array(
        z.object({
          dir: z.string(),
          /** `manual`: changes wait for persistent.apply; `auto`: committed when a turn ends. */
          commit: z.enum(['auto', 'manual']),
          /** Read-only for this session: its changes are never committed. */
          readOnly: z.boolean(),
          /** What the next new turn does to these changes. */
          onNewTurn: NewTurnEffect,
          files: z.array(PersistentFileChange),
          diff: z.string(),
        }),
      ),
      /** Set when a new turn would be refused or would discard changes: the sentence to warn with. */
      newTurnWarning: z.string().nullable(),
    }),
  },
  'persistent.file': {
    doc: "One changed file's two texts for a diff editor: uncommitted (project folder vs checkout) or, with commitSeq, before/after a persistent_commit.",
    input: z.object({
      sessionId,
      dir: z.string().min(1),
      path: z.string().min(1).max(4096),
      /** Seq of a persistent_commit event: the file as that commit changed it. Absent: the uncommitted change. */
      commitSeq: seq.optional(),
    }),
    output: FileVersions,
  },
  'persistent.history': {
    doc: "What each turn changed in the session's Persistent Dirs and committed (persistent_commit events, grouped by turn).",
    input: z.object({ sessionId }),
    output: z.object({
      turns: z.array(
        z.object({
          /** Turn N: the Nth user message and what followed it (0: before the first prompt). */
          turn: z.number().int().nonnegative(),
          /** The prompt, first 200 characters. */
          prompt: z.string().optional(),
          commits: z.array(
            z.object({
              seq,
              at: z.string(),
              dir: z.string(),
              files: z.array(PersistentFileChange),
              diffArtifact: z.string().optional(),
            }),
          ),
        }),
      ),
    }),
  },
  'persistent.apply': {
    doc: 'Commits the uncommitted changes of the named dirs (default: every manual one) to their folders, three-way merged; records persistent_commit.',
    input: z.object({ sessionId, dirs: z.array(z.string().min(1)).optional() }),
    output: z.object({ reports: z.array(PersistentCommitReport) }),
  },
  'persistent.discard': {
    doc: 'Throws away the uncommitted changes of the named dirs (default: every manual one); returns the dirs reset.',
    input: z.object({ sessionId, dirs: z.array(z.string().min(1)).optional() }),
    output: z.object({ discarded: z.array(z.string()) }),
  },
  'settings.get': {
    doc: 'The settings, which provider keys are set (never their values) and where keys are kept.',
    input: empty,
    output: SettingsView,
  },
  'settings.set': {
    doc: 'Replaces the settings and/or sets (string) or removes (null) provider keys; returns the new view.',
    input: z.object({
      settings: SettingsValue.optional(),
      keys: z
        .object({
          anthropic: z.string().min(1).nullable().optional(),
          openai: z.string().min(1).nullable().optional(),
          openaiCompatible: z.string().min(1).nullable().optional(),
        })
        .optional(),
    }),
    output: SettingsView,
  },
  'settings.testProvider': {
    doc: 'Sends a tiny request to a provider (stored key unless one is given) and reports whether it answered.',
    input: z.object({
      provider: ProviderKind,
      model: z.string().min(1),
      baseUrl: z.string().url().optional(),
      apiKey: z.string().min(1).optional(),
    }),
    output: z.object({
      ok: z.boolean(),
      /** What happened, in words (the provider's error when not ok). */
      message: z.string(),
      latencyMs: z.number().nonnegative(),
    }),
  },
  'providers.catalogue': {
    doc: "Known models (newest first per provider) with windows, output limits, lifecycle, whether they are priced and whether the provider's models endpoint lists them; the suggested model per provider; main's today.",
    input: empty,
    output: z.object({
      models: z.array(
        z.object({
          id: z.string(),
          provider: ProviderKind,
          contextWindow: z.number().int().positive(),
          /** The most output tokens one request may ask for; absent when not documented. */
          maxOutputTokens: z.number().int().positive().optional(),
          /** Deprecated models answer until `retiresOn`; retired ones fail every request. */
          status: ModelStatus,
          /** First day (UTC, YYYY-MM-DD) the provider no longer serves the model, when announced. */
          retiresOn: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}$/)
            .optional(),
          /** The provider's recommended replacement (it may be a model Keel does not list). */
          replacement: z.string().optional(),
          /** False when a billed rate is undocumented: its cost is unknown, never $0. */
          priced: z.boolean(),
          /**
           * Whether the provider's last read list (its default endpoint in settings) has it; absent when no
           * list was read. A listed model is served, whatever a catalogue date says.
           */
          listed: z.boolean().optional(),
        }),
      ),
      /** The model a new session or a connection test suggests, per provider the catalogue covers. */
      suggested: z.partialRecord(ProviderKind, z.string()),
      /** Main's UTC day (its one clock): lifecycle is judged against this, never the page's clock. */
      today: UtcDay,
      /** The providers' model lists the answer used, with their age. */
      served: z.array(ServedListSummary),
    }),
  },
  'providers.refreshModels': {
    doc: "Reads a provider's models endpoint now (GET /v1/models) and caches it; fails with the provider's error in one line.",
    input: z.object({ provider: ProviderKind, baseUrl: z.string().url().optional() }),
    output: z.object({ served: ServedListSummary }),
  },
  'providers.detectLocal': {
    doc: 'Looks for local OpenAI-compatible servers (Ollama :11434, LM Studio :1234) and lists their models.',
    input: empty,
    output: z.object({
      servers: z.array(z.object({ name: z.string(), baseUrl: z.string(), models: z.array(z.string()) })),
    }),
  },
  'projects.openFolder': {
    doc: 'Picks a project folder: the native dialog in the app (`path` is its start), the given `path` in `keel serve`.',
    input: z.object({ path: folder.optional() }),
    output: z.object({
      /** Absolute real path; null when the dialog was cancelled. */
      folder: z.string().nullable(),
    }),
  },
  'projects.recent': {
    doc: 'Recently used project folders, newest first, with whether they still exist.',
    input: empty,
    output: z.object({
      projects: z.array(z.object({ folder: z.string(), exists: z.boolean(), lastUsedAt: z.string() })),
    }),
  },
  'app.launchCommands': {
    doc: 'Takes the commands that arrived before the UI was listening (a folder passed at launch); call once after subscribing to app.command.',
    input: empty,
    output: z.object({ commands: z.array(AppCommand) }),
  },
  'app.info': {
    doc: 'Version, mode (electron or serve), platform, home folder and what sandbox confines commands here, and why.',
    input: empty,
    output: z.object({
      version: z.string(),
      mode: z.enum(['electron', 'serve']),
      platform: z.string(),
      home: z.string(),
      sandbox: z.object({
        kind: z.enum(['bwrap', 'sandbox-exec', 'none']),
        reason: z.string(),
        version: z.string().nullable(),
      }),
    }),
  },
} as const satisfies Record<string, ChannelSpec>;

/** Every channel name, e.g. `sessions.list`. */
export type ChannelName = keyof typeof channels;

/** All channel names, in contract order. */
export const CHANNEL_NAMES = Object.keys(channels) as ChannelName[];

/** What the caller passes (defaults not yet applied). */
export type ChannelInput<C extends ChannelName> = z.input<(typeof channels)[C]['input']>;
/** What a handler receives (validated, defaults applied). */
export type ChannelArgs<C extends ChannelName> = z.output<(typeof channels)[C]['input']>;
/** What a channel resolves to on success. */
export type ChannelOutput<C extends ChannelName> = z.output<(typeof channels)[C]['output']>;

/** Every event main pushes to subscribers, by topic. */
export const topics = {
  /** An event was committed to a session log (by a turn, a decision, a rename...). */
  'event.appended': z.object({ sessionId: z.string(), event: SessionEvent }),
  /** A provider delta of a running turn; `sentAt` is main's Date.now() when pushed (latency measurement). */
  'turn.delta': z.object({ sessionId: z.string(), turnId: z.string(), delta: Delta, sentAt: z.number() }),
  /** Live redacted output of a running command (never split inside a character); after tool.watch, ack it with tool.outputAck. */
  'tool.output': z.object({
    sessionId: z.string(),
    turnId: z.string(),
    toolCallId: z.string(),
    chunk: z.string(),
  }),
  /** Progress that is not an event (a retry after a transient failure), in words. */
  'turn.notice': z.object({ sessionId: z.string(), turnId: z.string(), text: z.string() }),
  /** A session's status changed (turn started/ended); `outcome` is set when a turn ended. */
  'session.status': z.object({
    sessionId: z.string(),
    status: SessionStatus,
    running: z.boolean(),
    turnId: z.string().optional(),
    outcome: TurnOutcome.optional(),
  }),
  /** The session list changed (created, renamed, archived, deleted, status or activity): re-query it. */
  'sessions.changed': z.object({
    sessionId: z.string(),
    change: z.enum(['created', 'updated', 'renamed', 'archived', 'deleted']),
  }),
  /** Output of an interactive terminal (redacted, never split inside a character); ack it with terminal.ack. */
  'terminal.data': z.object({ terminalId: z.string(), sessionId: z.string(), chunk: z.string() }),
  /** An interactive terminal ended (exited, or was killed). */
  'terminal.exit': TerminalExit.extend({ terminalId: z.string(), sessionId: z.string() }),
  /** The desktop shell asks the UI to act (app menu, a folder passed to a second launch); never sent by `keel serve`. */
  'app.command': AppCommand,
} as const;

/** Every topic name, e.g. `turn.delta`. */
export type TopicName = keyof typeof topics;

/** All topic names. */
export const TOPIC_NAMES = Object.keys(topics) as TopicName[];

/** The payload of a pushed event of `T`. */
export type TopicPayload<T extends TopicName> = z.output<(typeof topics)[T]>;

type GroupOf<C extends string> = C extends `${infer G}.${string}` ? G : never;
type MethodOf<C extends string, G extends string> = C extends `${G}.${infer M}` ? M : never;

/** The function for one channel: input optional when every field is optional. */
export type ChannelFunction<C extends ChannelName> =
  Record<string, never> extends ChannelInput<C>
    ? (input?: ChannelInput<C>) => Promise<IpcResult<ChannelOutput<C>>>
    : (input: ChannelInput<C>) => Promise<IpcResult<ChannelOutput<C>>>;

/**
 * `window.keel`: exactly one function per channel, grouped by the part before the dot
 * (`keel.sessions.list(...)` calls `sessions.list`), plus `subscribe`. Nothing else.
 */
export type KeelApi = {
  readonly [G in GroupOf<ChannelName>]: {
    readonly [M in MethodOf<ChannelName, G>]: ChannelFunction<`${G}.${M}` & ChannelName>;
  };
} & {
  /** Calls `handler` for every pushed event of `topic` until the returned function is called. */
  readonly subscribe: <T extends TopicName>(
    topic: T,
    handler: (payload: TopicPayload<T>) => void,
  ) => () => void;
};

/** Splits a channel name into its API group and method (`sessions.list` → [`sessions`, `list`]). */
export function splitChannel(channel: ChannelName): [string, string] {
  const dot = channel.indexOf('.');
  return [channel.slice(0, dot), channel.slice(dot + 1)];
}

/** Builds a KeelApi from one `invoke(channel, input)` transport and one `subscribe`: the preload and the ws bridge share it. */
export function buildKeelApi(
  invoke: (channel: ChannelName, input: unknown) => Promise<IpcResult<unknown>>,
  subscribe: (topic: TopicName, handler: (payload: unknown) => void) => () => void,
): KeelApi {
  const api: Record<string, Record<string, (input?: unknown) => Promise<IpcResult<unknown>>>> = {};
  for (const channel of CHANNEL_NAMES) {
    const [group, method] = splitChannel(channel);
    api[group] ??= {};
    api[group][method] = (input?: unknown) => invoke(channel, input ?? {});
  }
  const topicsKnown = new Set<string>(TOPIC_NAMES);
  const subscribeChecked = (topic: TopicName, handler: (payload: unknown) => void) => {
    if (!topicsKnown.has(topic)) throw new Error(`unknown topic ${String(topic)}`);
    return subscribe(topic, handler);
  };
  return Object.freeze({
    ...Object.fromEntries(Object.entries(api).map(([group, methods]) => [group, Object.freeze(methods)])),
    subscribe: subscribeChecked,
  }) as unknown as KeelApi;
}

/** True when `name` is a channel of the contract (the router rejects anything else). */
export function isChannelName(name: unknown): name is ChannelName {
  return typeof name === 'string' && Object.hasOwn(channels, name);
}

/** True when `name` is a topic of the contract. */
export function isTopicName(name: unknown): name is TopicName {
  return typeof name === 'string' && Object.hasOwn(topics, name);
}

/** The Electron IPC channel of a contract channel (`keel:sessions.list`); the router handles exactly these. */
export function ipcChannelOf(channel: ChannelName): string {
  return `keel:${channel}`;
}

/** The one Electron push channel: main sends `{ topic, payload }` to the window. */
export const IPC_PUSH = 'keel:push';

/** `keel serve`: the WebSocket path; the URL carries the per-launch token as `?token=`. */
export const WS_PATH = '/ws';

/** `keel serve` wire format, browser → main: one call. */
export const WsRequest = z.object({
  id: z.number().int().nonnegative(),
  channel: z.string(),
  input: z.unknown(),
});
export type WsRequest = z.infer<typeof WsRequest>;

/** `keel serve` wire format, main → browser: a call's result, or a pushed event. */
export const WsMessage = z.union([
  z.object({
    id: z.number().int().nonnegative(),
    result: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true), value: z.unknown() }),
      z.object({ ok: z.literal(false), error: IpcError }),
    ]),
  }),
  z.object({ topic: z.string(), payload: z.unknown() }),
]);
export type WsMessage = z.infer<typeof WsMessage>;
