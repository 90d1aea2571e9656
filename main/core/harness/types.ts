import type { Readable } from 'node:stream';
import type { CommandUse } from '../../common/customEvents.js';
import type { ModelPin, Policy, SessionEvent, ToolMode, Usage } from '../../common/events.js';
import type { SessionEndReason } from '../../common/hookEvents.js';
import type { TraceEntry } from '../log/sessionLog.js';
import type { StreamSource } from '../persistent/streamWrite.js';
import type { CommitModel, CommitReport, UncommittedDir, UncommittedFile } from '../persistent/types.js';
import type { SettingsChange, TurnOutcome } from '../turn/engine.js';
import type { CompactionSettings } from '../compaction/settings.js';
import type { ModelProvider, ProviderKeys } from '../../providers/index.js';
import type { AttachmentInput } from './attachments.js';

export type { CommitModel, CommitReport, UncommittedDir, UncommittedFile, StreamSource, TraceEntry };

/** What a session is doing. */
export type HarnessSessionState = 'idle' | 'running' | 'awaiting_approval' | 'interrupted' | 'error';

/** An approval the session waits for (the `approval_request` event, trimmed). */
export type HarnessPendingApproval = {
  seq: number;
  toolCallId: string;
  tool: string;
  arguments: string;
  reason?: string;
};

/** Token usage summed over every model request of the session so far. */
export type HarnessUsage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
};

/**
 * A session's status: derived from its log (and the index's view of a running turn) plus the host's
 * persisted patch, so it survives a restart. `turn` is the number of user turns so far.
 */
export type HarnessSessionStatus = {
  state: HarnessSessionState;
  turn: number;
  lastSeq: number;
  pendingApprovals: HarnessPendingApproval[];
  usage: HarnessUsage;
  updatedAt: string;
  /** Free-form host fields set through setStatus (kept across restarts). */
  [hostField: string]: unknown;
};

/** Options of `files.write`. */
export type FileWriteOptions = {
  mediaType?: string;
  /** Where the data came from (`background-upload`, `app-context`...), recorded in the event. */
  source?: string;
  /** The host message the file belongs to: a message staged twice is recorded once. */
  messageId?: string;
};

/** What `files.write` staged (the `file_staged` event's facts). */
export type StagedFile = {
  /** The path as the session knows it: `/session/...` or `/persistent/<name>/...`. */
  path: string;
  size: number;
  sha256: string;
  /** Seq of the `file_staged` event. */
  seq: number;
  /** True when this exact staging was already recorded (a host retry) and nothing was written. */
  alreadyStaged: boolean;
};

/** Stages files into a session between turns. */
export type FileWriter = {
  /**
   * Streams `data` to `path` in the session's private workspace (`/session/...`) or its checkout of a
   * Persistent Dir (`/persistent/<name>/...`, discarded at the next turn unless committed), with bounded
   * memory, confined like the tools' paths, and records a `file_staged` event.
   */
  write(path: string, data: StreamSource, options?: FileWriteOptions): Promise<StagedFile>;
};

/** One artifact: large tool outputs, commit diffs, conflict patches. Handles are paths under the artifacts folder. */
export type HarnessArtifact = { handle: string; size: number; modifiedAt: string };

/** Reads a session's artifacts by handle, confined to its artifacts folder. */
export type HarnessArtifactAccessor = {
  list(): Promise<HarnessArtifact[]>;
  /** The artifact's size and time, or undefined when there is no such artifact. */
  stat(handle: string): Promise<HarnessArtifact | undefined>;
  /** The whole artifact (up to `maxBytes`, default 64 MiB; bigger ones: use `stream`). */
  read(handle: string, options?: { maxBytes?: number }): Promise<Buffer>;
  /** The artifact as a stream, for artifacts of any size. */
  stream(handle: string): Promise<Readable>;
};

/** A reference to the session's trace (per-turn stages, timings, tokens). */
export type TraceRef = {
  sessionId: string;
  read(options?: { turn?: number }): Promise<TraceEntry[]>;
};

/** The durable, isolated boundary of one conversation or job (the seed's HarnessSession). */
export type HarnessSession = {
  id: string;
  /** Absolute session folder; workflow stores live under `<dataDir>/workflows`. */
  dataDir?: string;
  files: FileWriter;
  artifacts: HarnessArtifactAccessor;
  trace: TraceRef;
  status(): Promise<HarnessSessionStatus>;
  setStatus(patch: Partial<HarnessSessionStatus>): Promise<void>;
  markMessageStaged(messageId: string): Promise<void>;
  setReadOnlyPersistentDirs(harnessDirs: readonly string[]): void;
  getReadOnlyPersistentDirs(): readonly string[];
};

/**
 * What the loops accept: a session written against the older five-member shape still runs. The loops call
 * the mutators as optional; without them the session loses status tracking and staging dedupe.
 */
export type HarnessSessionPort = Pick<HarnessSession, 'id' | 'files' | 'artifacts' | 'trace'> & {
  dataDir?: string;
} & Partial<Omit<HarnessSession, 'id' | 'dataDir' | 'files' | 'artifacts' | 'trace'>>;

/** Options of `getOrCreate`. */
export type GetOrCreateSessionOptions<TExtraBody = unknown> = {
  /** App-defined session key (1–128 letters, digits, `.`, `_`, `-`). */
  id: string;
  /** App-defined context stored with the session; it reaches policy, events (session_created) and traces. */
  extraBody?: TExtraBody;
  /** Host metadata for traces and debugging. */
  metadata?: Record<string, unknown>;
  /** A title for a new session. */
  title?: string;
  /**
   * How a new session is set up, over the harness's options (a host with many projects, like the app, keeps
   * one harness and gives each session its own folder and model). Ignored when the session exists.
   */
  create?: SessionSetup;
};

/** A new session's own settings; each field replaces the harness option of the same name. */
export type SessionSetup = {
  model?: Omit<ModelPin, 'contextWindow'> & { contextWindow?: number };
  persistentDirs?: Record<string, PersistentDirOption>;
  /**
   * A project folder the session works on directly, without a checkout (its tools write into the folder
   * itself). Only without a `project` Persistent Dir; the default is a checkout.
   */
  projectFolder?: string;
  policy?: Policy;
  toolMode?: ToolMode;
  systemPrompt?: string;
  networkAllow?: string[];
  /** The session's spend cap (#31), recorded as its first budget_set; absent: settings' `defaults.budget`. */
  budget?: { usd?: number; tokens?: number };
};

/** Creates and finds sessions. */
export type HarnessSessionManager<TExtraBody = unknown> = {
  getOrCreate(options: GetOrCreateSessionOptions<TExtraBody>): Promise<HarnessSession>;
  get(id: string): Promise<HarnessSession | undefined>;
};

/** A Persistent Dir as the harness is configured with it: a folder, or a folder and its commit model. */
export type PersistentDirOption = string | { path: string; commit?: CommitModel };

/** What a policy function sees: the session's key and its stored context. */
export type PolicyContext<TExtraBody = unknown> = {
  sessionId: string;
  extraBody: TExtraBody | undefined;
  metadata: Record<string, unknown> | undefined;
};

/** Options of `createHarness`. */
export type HarnessOptions<TExtraBody = unknown> = {
  /** Keel home: `<home>/sessions/<id>` are the sessions' folders. */
  home: string;
  /** The model new sessions are pinned to; defaults to settings.json's defaults. */
  model?: Omit<ModelPin, 'contextWindow'> & { contextWindow?: number };
  /** API keys (else the environment's); a function is read at every turn, so a key set meanwhile applies. */
  keys?: ProviderKeys | (() => ProviderKeys);
  /** Builds providers yourself (a custom or test provider); overrides keys. */
  createProvider?: (pin: ModelPin) => ModelProvider;
  /** The environment providers read keys from and commands get allowlisted variables from. */
  env?: NodeJS.ProcessEnv;
  /**
   * Persistent Dirs by name, mounted at `persistent/<name>/`. `project` defaults to commit `auto`,
   * every other name to `manual`.
   */
  persistentDirs?: Record<string, PersistentDirOption>;
  /** The approval policy, fixed or decided per session from its extraBody (re-checked every turn). */
  policy?: Policy | ((context: PolicyContext<TExtraBody>) => Policy);
  /** Tool mode of new sessions; default `write` (`read-only` when the policy is read-only). */
  toolMode?: ToolMode;
  /** System prompt of new sessions (Keel's default otherwise); the workspace layout is appended to it. */
  systemPrompt?: string;
  /** Hosts commands may reach through the allowlist proxy. */
  networkAllow?: string[];
  /** Model requests one turn may make (default 50). */
  maxSteps?: number;
  /** Automatic compaction; defaults to settings.json's `compaction` (read at every turn). */
  compaction?: Partial<CompactionSettings>;
  /**
   * Keep a session's MCP servers running between its turns (a long-lived host: the app, `keel serve`, a
   * server embedding the harness) instead of starting them every turn; they stop after `idleMs` (default
   * 10 min) without a turn, on `harness.stopMcp()`, or when their configuration changed. Default: per turn.
   */
  keepMcpServers?: boolean | { idleMs?: number };
  /**
   * Issue #36: watch the project folders this process snapshots (a long-lived host: the app, `keel serve`, the ACP
   * agent), so a turn's snapshot stages only what changed since the last one instead of a stat pass over the whole
   * folder (main/core/persistent/backingWatch.ts). A one-turn host (`keel run`) would never use what it watched.
   */
  watchProjects?: boolean;
  /**
   * Issue #32, a test seam: web_fetch may connect to these exact local addresses (a test's loopback server),
   * which the production rule refuses. Only code that builds the harness can set it: no settings or project
   * file reaches it (README: "web_fetch").
   */
  webFetch?: { testAddresses?: readonly string[] };
};

/** A harness: the session manager of one home, with its configuration. */
export type Harness<TExtraBody = unknown> = {
  readonly home: string;
  readonly sessions: HarnessSessionManager<TExtraBody>;
  /**
   * Stops the MCP servers kept for a session (it was closed or evicted), or for every session (the host
   * exits); a turn running meanwhile stops its servers when it ends. Nothing to do without `keepMcpServers`.
   * The session's background commands (issue #32) are stopped too, kept servers or not.
   */
  stopMcp(sessionId?: string): Promise<void>;
  /**
   * Issue #30: the host lets go of sessions (it exits, an editor closed one, one is deleted): their SessionEnd
   * hooks run, with `reason`, at most once per end and never longer than the end's budget (1.5 s unless a hook's
   * `timeout` or CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS says more, at most 60 s). Without `sessionId`: every
   * session this harness ran a turn of; with one: that session if this harness ran a turn of it, or whoever did
   * when `reason` is `clear` (deleted). An ended session's next prompt here is a SessionStart `resume`. Never
   * throws: a session another process holds, or a hook that fails, is a notice.
   */
  endSessions(options: EndSessionsOptions): Promise<void>;
};

/** What `Harness.endSessions` takes. */
export type EndSessionsOptions = {
  reason: SessionEndReason;
  sessionId?: string;
  /** What went wrong (a hook failed, a session was busy) and what a hook asked to show (`systemMessage`). */
  onNotice?: (text: string) => void;
};

/** A message of the host's conversation; the last `user` message is the new turn's input. */
export type HarnessMessage = {
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string | readonly { type: string; text?: string }[];
  /**
   * Issue #30: the custom command a user message was expanded from (`expandPrompt`); recorded in its
   * user_message, and its `allowed-tools` bound the turn.
   */
  command?: CommandUse;
  /** A user message's files (images, PDFs): checked by their bytes and kept as artifacts (attachments.ts). */
  attachments?: readonly AttachmentInput[];
};

/** Options of `streamHarness` / `generateHarness`. */
export type StreamHarnessOptions = {
  harness: Harness<unknown>;
  messages: readonly HarnessMessage[];
  /** A session handle (any object with the session's `id`) or the session key itself. */
  session: HarnessSessionPort | string;
  signal?: AbortSignal;
  maxSteps?: number;
  /** Issue #37: the session's settings changed while the turn runs, taken before each request (TurnManager's). */
  settingsChanges?: () => SettingsChange[];
  /**
   * Issue #30: a new prompt's plan mode (true: the turn plans; false: plan mode off), recorded as
   * plan_mode_changed before the prompt when it differs from the session's; absent: as the session is.
   */
  planMode?: boolean;
  /**
   * Called with every part as it happens, before it is queued for iteration: a host that forwards parts
   * (the app's push channel, flow control of live output) sees them without an await in between.
   */
  onPart?: (part: HarnessStreamPart) => void;
};

/** One part of a streamed turn. */
export type HarnessStreamPart =
  /** The turn holds the session and is about to ask the model (after the checkouts were prepared). */
  | { type: 'started'; turn: number; resumed: boolean }
  | { type: 'text'; text: string }
  /** Reasoning text as it streams (logged with the assistant message when it completes). */
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; id: string; name: string }
  | { type: 'event'; event: SessionEvent }
  | { type: 'tool_output'; toolCallId: string; chunk: string }
  | { type: 'notice'; text: string }
  | { type: 'commit'; report: CommitReport }
  /** An event a subagent (a child session of this turn) appended. */
  | { type: 'subagent_event'; sessionId: string; event: SessionEvent }
  /** Live output of a command a subagent runs. */
  | { type: 'subagent_output'; sessionId: string; toolCallId: string; chunk: string };

/** What a turn produced. */
export type HarnessResult = {
  sessionId: string;
  outcome: TurnOutcome;
  /** The final text of a completed turn ('' otherwise). */
  text: string;
  /** Every event this call appended, in order (commits included). */
  events: SessionEvent[];
  /** Tokens of this call's model requests. */
  usage: Usage;
  /** Auto commits made when the turn stopped (and leftovers committed before it began). */
  commits: CommitReport[];
  /** True when the message had been staged before (a host retry): nothing new was appended for it. */
  alreadyStaged: boolean;
  /** Present when the session has manual Persistent Dirs: commits them now (all, or the named ones). */
  commitManual?: (dirs?: readonly string[]) => Promise<CommitReport[]>;
};

/** A streamed turn: iterate it for deltas and events; `result` settles when the turn stops. */
export type HarnessStream = AsyncIterable<HarnessStreamPart> & { result: Promise<HarnessResult> };
