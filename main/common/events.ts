import { z } from 'zod';
import { eventBase } from './eventBase.js';
import { exactCheck, type ExactCheck } from './exactCheck.js';
import { PermissionRulesApplied } from './setup.js';
import { AgentUse, CommandUse, CustomListed } from './customEvents.js';
import { HookRan } from './hookEvents.js'; // issue #30: hooks
import { McpConfigTrusted, McpResourceUpdated, McpToolsListed, ToolRulesApplied } from './mcpEvents.js';
import { PlanApproved, PlanModeChanged, PlanRejected } from './planEvents.js'; // issue #30: plan mode
import { LocalModelPin, ProviderKind } from './providerKind.js';
import { StopDetails } from './stopReasons.js';
// #31: usage and spend caps live in spendEvents.ts (this file's size); they are event kinds like the rest.
import { BudgetReached, BudgetSet, Usage } from './spendEvents.js';
export { BudgetReached, BudgetSet, SpendFigures, Usage } from './spendEvents.js';
import { userMessageAttachments } from './attachments.js'; // issue #32

// The event kinds of a session log. Every fact about a session is one of these, appended once and never edited;
// messages, status and the UI are projections of them. Field names are camelCase and are the export format.

/** Tool modes are different registries, not one registry plus a prompt. */
export const ToolMode = z.enum(['read-only', 'write']);
export type ToolMode = z.infer<typeof ToolMode>;

/** Approval policies, from strictest to loosest. */
export const Policy = z.enum(['read-only', 'ask', 'auto-edit', 'full-auto']);
export type Policy = z.infer<typeof Policy>;

export { ProviderKind };
/** A tool call as the model asked for it; `arguments` is the JSON text the model produced. */
export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** How hard a reasoning model thinks (`off`: none, where allowed); in the pin, absent: the model's default. */
export const ReasoningEffort = z.enum(['off', 'low', 'medium', 'high']);
export type ReasoningEffort = z.infer<typeof ReasoningEffort>;

/**
 * Where a reasoning part sat among the message's tool calls: after `afterCalls` of them (absent: before
 * the text and every call), so a replay keeps the provider's own order.
 */
const reasoningPosition = { afterCalls: z.number().int().positive().optional() };

/**
 * One piece of a model's reasoning, exactly as the provider returned it, so it can be sent back unchanged:
 * Anthropic `thinking` (with the `signature` that authenticates it) and `redacted_thinking` (opaque `data`),
 * an OpenAI Responses `reasoning` item (its `id`, the `encryptedContent` a stateless request replays, the
 * summary texts), or `reasoning_text` streamed by an OpenAI-compatible server (shown and logged, not signed).
 */
export const ReasoningPart = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('thinking'),
    thinking: z.string(),
    signature: z.string(),
    ...reasoningPosition,
  }),
  z.object({ type: z.literal('redacted_thinking'), data: z.string().min(1), ...reasoningPosition }),
  z.object({
    type: z.literal('reasoning'),
    id: z.string().min(1),
    encryptedContent: z.string().min(1).optional(),
    summary: z.array(z.string()),
    ...reasoningPosition,
  }),
  z.object({ type: z.literal('reasoning_text'), text: z.string(), ...reasoningPosition }),
]);
export type ReasoningPart = z.infer<typeof ReasoningPart>;

/**
 * once | session | tool | path:<glob> | prefix:<command prefix>. `tool` (MCP tools only): this tool for every
 * later call in this session and, as a rule kept in the home (`<home>/tool-rules.jsonl`), in the project's
 * later sessions until revoked.
 */
export const ApprovalScope = z.union([
  z.literal('once'),
  z.literal('session'),
  z.literal('tool'),
  z.string().regex(/^path:.+/, 'a path scope looks like path:src/**'),
  z.string().regex(/^prefix:.+/, 'a prefix scope looks like prefix:npm test'),
  // Issue #32: web_fetch of one host for the session.
  z.string().regex(/^domain:[A-Za-z0-9.:[\]-]+$/, 'a domain scope looks like domain:example.com'),
]);
export type ApprovalScope = z.infer<typeof ApprovalScope>;

const { seq, base } = eventBase;

/** The pinned model: provider, base URL (never the key), model id and its context window. */
export const ModelPin = z.object({
  provider: ProviderKind,
  model: z.string().min(1),
  baseUrl: z.string().optional(),
  contextWindow: z.number().int().positive(),
  /** Absent (and in sessions made before it existed): the catalogue's default for the model. */
  reasoningEffort: ReasoningEffort.optional(),
  local: LocalModelPin.optional(),
});
export type ModelPin = z.infer<typeof ModelPin>;

export const SessionCreated = z.object({
  ...base,
  kind: z.literal('session_created'),
  sessionId: z.string().min(1),
  title: z.string().optional(),
  projectFolder: z.string(),
  ...ModelPin.shape,
  toolMode: ToolMode,
  policy: Policy,
  systemPrompt: z.string().optional(),
  /** Hosts commands may reach through the allowlist proxy; absent or empty: no network at all. */
  networkAllow: z.array(z.string().min(1)).optional(),
  /** Globs relative to the tools' root (see `pathRoot`) that need approval to write, on top of .git/.keel/.vscode. */
  protectedGlobs: z.array(z.string().min(1)).optional(),
  /**
   * Where the model's paths start. `project`: the project's checkout (or folder) is the root of every file
   * tool and the folder commands run in; the private area is `/session/...`, other Persistent Dirs
   * `/persistent/<name>/...`. Absent (sessions made before): a checkout session's root is the workspace
   * holding `session/` and `persistent/<name>/`, so its logged paths (`persistent/project/src/x`) keep meaning.
   */
  pathRoot: z.literal('project').optional(),
  parentId: z.string().optional(),
  /** A fork (`keel fork`): the session and seq its first events were copied from, up to and including that seq. */
  forkedFrom: z.object({ sessionId: z.string().min(1), seq }).optional(),
  extraBody: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export const UserMessage = z.object({
  ...base,
  kind: z.literal('user_message'),
  content: z.string(),
  messageId: z.string().optional(),
  command: CommandUse.optional(), // issue #30: the custom command `content` was expanded from
  ...userMessageAttachments,
});
export const AssistantMessage = z.object({
  ...base,
  kind: z.literal('assistant_message'),
  content: z.string(),
  toolCalls: z.array(ToolCall).default([]),
  /** The message's reasoning in the order it streamed (absent in older logs and from models that give none). */
  reasoning: z.array(ReasoningPart).optional(),
  usage: Usage.optional(),
  stopReason: z.string().optional(),
  stopDetails: StopDetails.optional(), // a refusal's category and explanation, as the provider gave them
  model: z.string().optional(),
});

/** One file of a change to several files: its path as shown and its images before and after (null: absent). */
export const FileImages = z.object({
  path: z.string().min(1),
  preImageHash: z.string().nullable(),
  postImageHash: z.string().nullable(),
  /** Moved here from this path (`*** Move to:`). */
  fromPath: z.string().optional(),
});

export const ToolCallStarted = z.object({
  ...base,
  kind: z.literal('tool_call_started'),
  toolCallId: z.string().min(1),
  tool: z.string().min(1),
  idempotencyKey: z.string().min(1),
  /** For file changes: sha256 of the file before (null: it did not exist) and after, so resume applies it at most once. */
  preImageHash: z.string().nullable().optional(),
  postImageHash: z.string().optional(),
  /** A change to several files (apply_patch): each file's images (null: absent), the hashes above being the set's. */
  files: z.array(FileImages).optional(),
});

/** The image types a tool result may show (checked from the bytes, never taken from a server's word). */
export const ImageMimeType = z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
export type ImageMimeType = z.infer<typeof ImageMimeType>;

/** An image a tool returned, kept as an artifact of the session (an MCP tool's image content). */
export const ToolImage = z.object({
  /** Relative to the session's artifacts folder. */
  handle: z.string().min(1),
  mimeType: ImageMimeType,
  bytes: z.number().int().nonnegative(),
});
export type ToolImage = z.infer<typeof ToolImage>;

export const ToolResult = z.object({
  ...base,
  kind: z.literal('tool_result'),
  toolCallId: z.string().min(1),
  tool: z.string().optional(),
  content: z.string(),
  isError: z.boolean().optional(),
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  artifact: z.string().optional(),
  /** Images the result holds, as artifacts: shown in the UI, sent to a model whose provider takes them. */
  images: z.array(ToolImage).optional(),
  idempotencyKey: z.string().optional(),
  preImageHash: z.string().nullable().optional(),
  postImageHash: z.string().optional(),
  diff: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
});

export const ApprovalRequest = z.object({
  ...base,
  kind: z.literal('approval_request'),
  toolCallId: z.string().min(1),
  tool: z.string().min(1),
  arguments: z.string(),
  reason: z.string().optional(),
  diff: z.string().optional(),
  unknownOutcome: z.boolean().optional(),
});

export const ApprovalGranted = z.object({
  ...base,
  kind: z.literal('approval_granted'),
  requestSeq: seq,
  scope: ApprovalScope,
});

export const ApprovalDenied = z.object({
  ...base,
  kind: z.literal('approval_denied'),
  requestSeq: seq,
  reason: z.string().optional(),
});

export const ApprovalRevoked = z.object({
  ...base,
  kind: z.literal('approval_revoked'),
  grantSeq: seq,
  reason: z.string().optional(),
});

/** Where one step of the model's plan (its todo list) stands. */
export const PlanStatus = z.enum(['pending', 'in_progress', 'completed']);
export type PlanStatus = z.infer<typeof PlanStatus>;

/** One step of the model's plan as the todo tool records it; bounds are the tool's, not the log's. */
export const PlanItem = z.object({
  content: z.string(),
  status: PlanStatus,
  /** The step as it is being done ("Adding rate limiting"), shown while it is in progress. */
  activeForm: z.string().optional(),
});
export type PlanItem = z.infer<typeof PlanItem>;

export const Compaction = z.object({
  ...base,
  kind: z.literal('compaction'),
  /** Last seq the summary replaces. */
  through: seq,
  /** First seq the summary replaces. */
  fromSeq: seq.optional(),
  summary: z.string(),
  /** The session's first user message, kept verbatim outside the summary. */
  pinned: z.string(),
  tokensBefore: z.number().int().nonnegative().optional(),
  tokensAfter: z.number().int().nonnegative().optional(),
  model: z.string().optional(),
  /** Seq of an earlier compaction this one re-runs; both stay in the log. */
  supersedes: seq.optional(),
  /** The model's plan (its latest todo list) as of `through`, re-stated after the summary; absent: none. */
  plan: z.array(PlanItem).optional(),
  /** Tokens the summary requests spent, summed (absent in older logs); priced with `model` (#31). */
  usage: Usage.optional(),
});

export const Interrupted = z.object({
  ...base,
  kind: z.literal('interrupted'),
  /** The partial assistant text streamed before the stop. */
  content: z.string(),
  toolCalls: z.array(ToolCall).default([]),
  /** Reasoning streamed before the stop: shown, never replayed (an unsigned or partial block is rejected). */
  reasoning: z.array(ReasoningPart).optional(),
  reason: z.string().optional(),
});

export const FileStaged = z.object({
  ...base,
  kind: z.literal('file_staged'),
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  mediaType: z.string().optional(),
  source: z.string().optional(),
  messageId: z.string().optional(),
});

/** A sha256 as Keel records one (hex, lowercase): the history store names kept bytes by it, so `../…` is refused. */
export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256: 64 lowercase hex digits');

/** A file's git mode in a recorded change: regular, executable, symbolic link. */
export const FileMode = z.enum(['100644', '100755', '120000']);
export type FileMode = z.infer<typeof FileMode>;

/**
 * One file of a change that reached a folder: sha256 of its bytes before and after (null: absent; a link: of
 * its target text) and, when recorded, its modes. A change whose files carry modes had both sides' bytes kept
 * in the session's history store (`history/blobs/<sha256>`), which is what makes it revertible.
 */
export const ChangedFile = z.object({
  path: z.string(),
  preHash: Sha256.nullable(),
  postHash: Sha256.nullable(),
  preMode: FileMode.optional(),
  postMode: FileMode.optional(),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

export const PersistentCommit = z.object({
  ...base,
  kind: z.literal('persistent_commit'),
  dir: z.string().min(1),
  files: z.array(ChangedFile),
  diffArtifact: z.string().optional(),
});

/**
 * Earlier changes of a folder (persistent_commit or changes_reverted events, by seq) were reverted onto it as
 * it was: `files` is what this revert wrote, `preHash` being the folder's bytes just before (the user's own
 * edits included, kept in the history store), so reverting this event puts them back.
 */
export const ChangesReverted = z.object({
  ...base,
  kind: z.literal('changes_reverted'),
  dir: z.string().min(1),
  reverts: z.array(seq).min(1),
  /** The turn whose changes these were, when a whole turn was reverted. */
  turn: z.number().int().positive().optional(),
  files: z.array(ChangedFile),
});

/** One file of a user snapshot: sha256 of its bytes (kept in the history store) and its mode; null: it was absent. */
export const SnapshotFile = z.object({
  path: z.string(),
  sha256: Sha256.nullable(),
  mode: FileMode.optional(),
});
export type SnapshotFile = z.infer<typeof SnapshotFile>;

/**
 * The user's work in a folder, kept just before Keel wrote into it (a revert, a rewind with its files, a
 * restore): the files git counts as changed since HEAD and every file the write touches, each file's bytes kept
 * in the history store (a file without a mode was too large to keep). `omitted`: changed files past the cap.
 */
export const UserSnapshot = z.object({
  ...base,
  kind: z.literal('user_snapshot'),
  dir: z.string().min(1),
  /** What Keel was about to do, said to the user ("before reverting turn 2"). */
  reason: z.string(),
  files: z.array(SnapshotFile),
  omitted: z.number().int().nonnegative().optional(),
});

/** A user snapshot's files were written back into its folder (`files`: what that changed; `preHash`: the folder's bytes before). */
export const UserSnapshotRestored = z.object({
  ...base,
  kind: z.literal('user_snapshot_restored'),
  dir: z.string().min(1),
  snapshotSeq: seq,
  files: z.array(ChangedFile),
});

/**
 * The conversation continues from `toSeq`: the events after it up to this one are set aside (still in the
 * log, shown folded in the transcript) and every projection, state and compaction reads as if they were
 * not there. `toSeq` ends a turn (what follows it is a user message), so no call is left without its result.
 */
export const Rewound = z.object({
  ...base,
  kind: z.literal('rewound'),
  toSeq: seq,
  /** The recorded changes to the folders made after `toSeq` that were reverted with it (`--files`). */
  revertedSeq: seq.optional(),
  /**
   * Why, when Keel rewound by itself: `refusal`, the provider declined the turn and requires it out of the
   * conversation before the next request (the turn's effects on files stay; its rows stay in the log).
   */
  cause: z.literal('refusal').optional(),
});

export const SubagentStarted = z.object({
  ...base,
  kind: z.literal('subagent_started'),
  childId: z.string().min(1),
  toolCallId: z.string().optional(),
  task: z.string(),
  tools: z.array(z.string()),
  agent: AgentUse.optional(), // issue #30: the custom agent the call named
});

export const SubagentResult = z.object({
  ...base,
  kind: z.literal('subagent_result'),
  childId: z.string().min(1),
  toolCallId: z.string().optional(),
  content: z.string(),
  truncated: z.boolean().optional(),
  outOfBudget: z.boolean().optional(),
});

export const ModelChanged = z.object({
  ...base,
  kind: z.literal('model_changed'),
  ...ModelPin.shape,
});

/** The user renamed the session; the newest one is the title lists show. */
export const SessionRenamed = z.object({
  ...base,
  kind: z.literal('session_renamed'),
  title: z.string().min(1).max(500),
});

/** One instruction file as a turn read it; `path` is project-relative with `/` separators. */
export const InstructionFile = z.object({
  path: z.string().min(1),
  /** sha256 (hex) of the bytes read: the whole file, or its first MiB when it is larger. */
  sha256: z.string().min(1),
  /** The file's size in bytes. */
  size: z.number().int().nonnegative(),
  /** What the model is given: the file (redacted), or its first part when the size cap cut it. */
  content: z.string(),
  /** True when `content` is not the whole file (the cap on project instructions was reached). */
  truncated: z.boolean().optional(),
});
export type InstructionFile = z.infer<typeof InstructionFile>;

/**
 * The project's instruction files (AGENTS.md, or CLAUDE.md where a folder has none) as a turn found them,
 * appended when they differ from the newest such event (an empty list: they were removed). The newest is
 * projected right after the system prompt, so the prefix only changes when the files do.
 */
export const InstructionsLoaded = z.object({
  ...base,
  kind: z.literal('instructions_loaded'),
  files: z.array(InstructionFile),
});

/**
 * The pinned reasoning effort changed (`keel reasoning`, the model switch): the next request uses it. Not a
 * model_changed, so it confirms no endpoint of an imported session (core/log/imported.ts).
 */
export const ReasoningChanged = z.object({
  ...base,
  kind: z.literal('reasoning_changed'),
  effort: ReasoningEffort,
});

export const PolicyChanged = z.object({
  ...base,
  kind: z.literal('policy_changed'),
  policy: Policy,
});

export const ErrorEvent = z.object({
  ...base,
  kind: z.literal('error'),
  message: z.string(),
  code: z.string().optional(),
  retryable: z.boolean().optional(),
});

export {
  McpConfigTrusted,
  McpResourceUpdated,
  McpServerListed,
  McpToolsListed,
  ToolRulesApplied,
} from './mcpEvents.js';
// #32: background commands' event kinds live in backgroundEvents.ts.
import { BackgroundExited, BackgroundOutput, BackgroundStarted } from './backgroundEvents.js';
export { BackgroundExited, BackgroundOutput, BackgroundStarted } from './backgroundEvents.js';

/** Every event kind, checked at every boundary (import, IPC, reads in tests). */
export const SessionEvent = z.discriminatedUnion('kind', [
  SessionCreated,
  UserMessage,
  AssistantMessage,
  ToolCallStarted,
  ToolResult,
  ApprovalRequest,
  ApprovalGranted,
  ApprovalDenied,
  ApprovalRevoked,
  Compaction,
  Interrupted,
  FileStaged,
  PersistentCommit,
  ChangesReverted,
  UserSnapshot,
  UserSnapshotRestored,
  Rewound,
  SubagentStarted,
  SubagentResult,
  ModelChanged,
  ReasoningChanged,
  PolicyChanged,
  SessionRenamed,
  InstructionsLoaded,
  McpToolsListed,
  ToolRulesApplied,
  McpConfigTrusted,
  // #31
  BudgetSet,
  BudgetReached,
  PermissionRulesApplied,
  CustomListed,
  // issue #30: hooks
  HookRan,
  // issue #30: plan mode (planEvents.ts)
  PlanModeChanged,
  PlanApproved,
  PlanRejected,
  // #32
  BackgroundStarted,
  BackgroundOutput,
  BackgroundExited,
  // issue #33: resource subscriptions
  McpResourceUpdated,
  ErrorEvent,
]);
export type SessionEvent = z.infer<typeof SessionEvent>;
export type EventKind = SessionEvent['kind'];
export type EventOf<K extends EventKind> = Extract<SessionEvent, { kind: K }>;

/** An event before the log gives it a seq and a time (distributed over the kinds). */
type Unstamped<E> = E extends SessionEvent ? Omit<E, 'seq' | 'at'> : never;
export type NewEvent = Unstamped<SessionEvent>;

export const EVENT_KINDS: readonly EventKind[] = SessionEvent.options.map((o) => o.shape.kind.value);

/** Per kind, its schema's exact check (exactCheck.ts), compiled on first use; undefined where zod always runs. */
const exactChecks = new Map<string, ExactCheck | undefined>();

function exactCheckOf(kind: unknown): ExactCheck | undefined {
  if (typeof kind !== 'string') return undefined;
  const known = exactChecks.get(kind); // one lookup on the append path; `has` only for a kind without a check
  if (known !== undefined || exactChecks.has(kind)) return known;
  const member = SessionEvent.options.find((o) => o.shape.kind.value === kind);
  const check = member ? exactCheck(member) : undefined;
  exactChecks.set(kind, check);
  return check;
}

/**
 * `SessionEvent.parse` for the log's append path: a value its kind's exact check accepts is returned as it is
 * (zod would return an equal copy); anything else goes through zod, which strips, or throws its message.
 * The value's nested objects are then the caller's own, not copies.
 */
export function parseSessionEvent(value: Record<string, unknown>): SessionEvent {
  return exactCheckOf(value['kind'])?.(value) === true ? (value as SessionEvent) : SessionEvent.parse(value);
}
