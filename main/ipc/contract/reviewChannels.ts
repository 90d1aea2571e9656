import { z } from 'zod';
import { ApprovalRequest, ApprovalScope, ImageMimeType, SessionEvent } from '../../common/events.js';
import { SessionTraceSummarySchema } from '../../common/traceSchema.js';
import { CostReport } from '../../common/costSchema.js';
import {
  sessionId,
  seq,
  GrantRecord,
  ApprovalPreview,
  TerminalInfo,
  TerminalExit,
  type ChannelSpec,
} from './schemas.js';

/** The channels of approvals, grants, traces, command output, artifacts and terminals. */
export const reviewChannels = {
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
        /** Also keep the grant as a permission rule of the project (issue 30), listed and removed in Settings. */
        always: z.boolean().optional(),
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
  // #31: where the money went, and the session's spend caps.
  'cost.report': {
    doc: "Where a session's money went: totals, by kind, turn, model and subagent, cache hit rate, caps, the newest turn.",
    input: z.object({ sessionId }),
    output: z.object({ report: CostReport }),
  },
  'budget.set': {
    doc: "Changes a session's spend caps (a budget_set event): a number sets a cap, null removes it. `invalid_state` while a turn runs.",
    input: z.object({
      sessionId,
      usd: z.number().nonnegative().max(1_000_000).nullable().optional(),
      tokens: z.number().int().nonnegative().max(1e12).nullable().optional(),
    }),
    output: z.object({ report: CostReport }),
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
  'artifacts.image': {
    doc: 'An image a tool result kept (tool_result.images), as base64 with the type its bytes are: the transcript shows it as a data: URL (no remote URL, inside the CSP). `not_found` for a handle that is no image of the session.',
    input: z.object({ sessionId, handle: z.string().min(1).max(1000) }),
    output: z.object({
      handle: z.string(),
      mimeType: ImageMimeType,
      bytes: z.number().int().nonnegative(),
      /** The image's bytes, base64. */
      data: z.string(),
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
      /** Where the shell starts, relative to the tools' root (`.`: the project; `persistent/project` for a checkout session from before). */
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
} as const satisfies Record<string, ChannelSpec>;
