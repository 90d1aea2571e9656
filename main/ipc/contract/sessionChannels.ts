import { z } from 'zod';
import {
  ReasoningEffort,
  ApprovalRequest,
  ModelPin,
  Policy,
  ProviderKind,
  SessionEvent,
  ToolMode,
} from '../../common/events.js';
import { PROMPT_MAX_CHARS } from './composerChannels.js';
import { sessionId, seq, folder, SessionSummary, ProjectGroup, type ChannelSpec } from './schemas.js';
import {
  MAX_APP_UPLOAD_BYTES,
  MAX_ATTACHMENTS,
  MAX_IMAGE_BYTES,
  MAX_PDF_BYTES,
} from '../../common/attachments.js';

/** Base64 of the largest file a prompt may carry (the core checks each file's own limit from its bytes). */
const ATTACHMENT_BASE64_MAX = Math.ceil(Math.max(MAX_IMAGE_BYTES, MAX_PDF_BYTES) / 3) * 4;
const UPLOAD_BASE64_MAX = Math.ceil(MAX_APP_UPLOAD_BYTES / 3) * 4;

/** The channels of sessions, their events and turns. */
export const sessionChannels = {
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
      /** The pinned reasoning effort; absent, the model's own default (off only where the model allows it). */
      reasoningEffort: ReasoningEffort.optional(),
      /** The session's spend cap (#31); absent, settings' defaults.budget. */
      budget: z
        .object({
          usd: z.number().positive().max(1_000_000).optional(),
          tokens: z.number().int().positive().max(1e12).optional(),
        })
        .optional(),
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
      /** Issue 37: the reply streaming now (a page opened mid-turn shows it whole); absent when none streams. */
      live: z.object({ turnId: z.string(), text: z.string(), reasoning: z.string() }).optional(),
      session: SessionSummary,
      pin: ModelPin,
      policy: Policy,
      toolMode: ToolMode,
      /** Issue #30: plan mode is on (the composer's mode toggle shows it). */
      planMode: z.boolean().optional(),
      networkAllow: z.array(z.string()),
      /** The session's Persistent Dir checkouts (empty: it works on its project folder directly). */
      persistentDirs: z.array(
        z.object({ dir: z.string(), commit: z.enum(['auto', 'manual']), readOnly: z.boolean() }),
      ),
      /** A fork's parent and the event it was forked at (`parentId` then names the parent, not a subagent's). */
      forkedFrom: z.object({ sessionId: z.string(), seq: z.number().int().nonnegative() }).optional(),
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
    doc: "Switches a session's pinned model (recorded as model_changed); the next request uses it, a running turn's too.",
    input: z.object({
      sessionId,
      provider: ProviderKind,
      model: z.string().min(1),
      /** Defaults to the session's own base URL when the provider stays, else the provider's in settings. */
      baseUrl: z.string().url().optional(),
      /** Defaults to settings.contextWindows[model], else the catalogue's; unknown models must give it. */
      contextWindow: z.number().int().positive().optional(),
      /**
       * Absent: the pinned effort is kept where the new model takes it, else its default (effortWarning
       * says so); null: the new model's default; an effort: that one, which the new model must take.
       */
      reasoningEffort: ReasoningEffort.nullable().optional(),
    }),
    output: z.object({
      pin: ModelPin,
      previous: ModelPin,
      /** Set when the model works today but its lifecycle says it may not for long (one line). */
      warning: z.string().optional(),
      /** Set when the pinned reasoning effort is one the new model refuses: it fell back to its default. */
      effortWarning: z.string().optional(),
      /** True when a turn runs: the change applies from its next request (recorded then). */
      queued: z.boolean().optional(),
    }),
  },
  'sessions.setReasoning': {
    doc: "Switches a session's reasoning effort (recorded as reasoning_changed); the next request uses it, a running turn's too.",
    input: z.object({ sessionId, effort: ReasoningEffort }),
    output: z.object({
      effort: ReasoningEffort,
      previous: ReasoningEffort,
      /** True when a turn runs: the change applies from its next request (recorded then). */
      queued: z.boolean().optional(),
    }),
  },
  // Issue #37: the policy changed from the session's header, as `keel policy` records it.
  'sessions.setPolicy': {
    doc: "Changes a session's approval policy (recorded as policy_changed); from the next request on, a running turn's too.",
    input: z.object({ sessionId, policy: Policy }),
    output: z.object({
      policy: Policy,
      previous: Policy,
      /** True when a turn runs: the change applies from its next request (recorded then). */
      queued: z.boolean().optional(),
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
      // The model's window is checked in the core (checkPromptSize), with a sentence for people.
      prompt: z.string().min(1).max(PROMPT_MAX_CHARS),
      /**
       * A new turn resets the session's checkouts: with uncommitted manual changes it is refused
       * (`invalid_state`) unless this is true, which discards them first (persistent.diff's newTurnWarning).
       */
      discardChanges: z.boolean().default(false),
      /**
       * Issue #32: files attached to the prompt (pasted, dropped, picked), as base64. The core checks each by
       * its bytes (PNG, JPEG, GIF, WebP, PDF; size and pixel limits; SVG refused): a refused one is
       * `invalid_input` naming it, and nothing is recorded.
       */
      attachments: z
        .array(
          z.object({
            name: z.string().max(255).optional(),
            data: z.string().min(1).max(ATTACHMENT_BASE64_MAX),
          }),
        )
        .max(MAX_ATTACHMENTS)
        .default([]),
      /**
       * Issue #32: other files (not images or PDFs) dropped, pasted or picked, as base64: staged at
       * `/session/uploads/<name>` (names sanitized, made distinct) and named in the prompt, as `keel run --file`.
       */
      uploads: z
        .array(
          z.object({
            name: z.string().min(1).max(255),
            data: z.string().max(UPLOAD_BASE64_MAX),
          }),
        )
        .max(MAX_ATTACHMENTS)
        .default([]),
      /** Issue #30: the composer's mode: true plans this prompt (plan mode on), false turns it off; absent: as is. */
      planMode: z.boolean().optional(),
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
} as const satisfies Record<string, ChannelSpec>;
