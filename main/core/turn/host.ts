import type {
  EventOf,
  InstructionFile,
  ModelPin,
  NewEvent,
  SessionEvent,
  SpendFigures,
} from '../../common/events.js';
import type { UnusualStop } from '../../common/stopReasons.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { RetryOptions } from '../../providers/retry.js';
import type { ModelProvider } from '../../providers/types.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { ToolContext } from '../../tools/types.js';
import type { HookDef } from '../hooks/config.js';
import type { Caps } from './budget.js';
import type { CallRecord, SessionState } from './state.js';

// The types a host builds a turn with and the outcomes it gets back; engine.ts is where hosts import them.

/** A change of the session's settings a running turn takes before its next request (TurnHost.settingsChanges). */
export type SettingsChange = Extract<
  NewEvent,
  { kind: 'model_changed' | 'reasoning_changed' | 'policy_changed' }
>;

/** What a turn pushes to its subscribers while it runs (the UI, the CLI's stdout). */
export type TurnHooks = {
  /** A text delta or a tool call starting to stream, as it arrives from the provider. */
  onDelta?: (
    delta:
      | { type: 'text'; text: string }
      | { type: 'reasoning'; text: string }
      | { type: 'tool_call'; id: string; name: string },
  ) => void;
  /** Every event the turn appends, after it is committed. */
  onEvent?: (event: SessionEvent) => void;
  /** Live, redacted output of a running command. */
  onToolOutput?: (toolCallId: string, chunk: string) => void;
  /** Progress that is not an event (a retry after a transient failure), in words for the user. */
  onNotice?: (text: string) => void;
  /** Every event a subagent (a child session of this turn) appends, with the child's session id. */
  onSubagentEvent?: (childSessionId: string, event: SessionEvent) => void;
  /** Live, redacted output of a command a subagent runs, with the child's session id and call id. */
  onSubagentToolOutput?: (childSessionId: string, toolCallId: string, chunk: string) => void;
};

/** The parts of a tool context that stay the same for every call of a session. */
export type SessionToolContext = Omit<
  ToolContext,
  'idempotencyKey' | 'toolCallId' | 'signal' | 'onOutput' | 'approved'
>;

/** Everything a turn needs from its host (the CLI, the app, `keel serve`, a library user). */
export type TurnHost = {
  /** The session's log, open for writing (the host holds the lease). */
  log: SessionLog;
  /** Builds the provider the session is pinned to; throws ProviderError('missing_key') when it cannot. */
  createProvider: (pin: ModelPin) => ModelProvider;
  /** The registry of the session's tool mode. */
  registry: ToolRegistry;
  tools: SessionToolContext;
  /** False when no OS sandbox can start: every command then needs approval. */
  sandboxAvailable: boolean;
  systemPrompt: string;
  /**
   * Reads the project's instruction files as they are now (main/core/prompts/instructions.ts); when a turn
   * starts, a change from the newest `instructions_loaded` is recorded as a new one. Without it, none are read.
   */
  instructions?: () => Promise<InstructionFile[]>;
  /**
   * Issue #30: the skills and custom agents the session may use (main/core/custom), read when the host was
   * built; when a turn starts, a change from the newest `custom_listed` is recorded as a new one.
   */
  custom?: Pick<EventOf<'custom_listed'>, 'skills' | 'agents' | 'problems'>;
  /**
   * Issue #30: the command hooks in effect (Claude Code's and Codex's, main/core/hooks), the user's and the
   * project's approved ones; each runs in the session's box. Without them, none run.
   */
  lifecycleHooks?: readonly HookDef[];
  /** Issue #30: the hook event run when the model would end a turn: a subagent's session runs `SubagentStop`. */
  stopEvent?: 'SubagentStop';
  /**
   * Issue #30: this process has not run a turn of this session before and the session has turns: its first
   * prompt here runs the SessionStart hooks with source `resume`.
   */
  resumed?: boolean;
  /**
   * The environment block of one request (main/core/prompts/environment.ts: date, OS, git, box, policy),
   * built before each request and sent after its last message; never logged. Without it, none is sent.
   */
  environment?: (state: SessionState) => Promise<string>;
  /** Model requests one turn may make before it stops (the turn's budget). */
  maxSteps?: number;
  /**
   * Caps on this session's own spend set from outside its log: a subagent's share of its parent's remaining
   * budget. The tighter of these and the session's own caps holds.
   */
  budgetCeiling?: Caps;
  /** The session whose cap a `budget_reached` tells the user to raise (a subagent's parent); default this one. */
  budgetOwner?: string;
  maxOutputTokens?: number;
  /** Stops the turn (Ctrl-C, the Stop button). */
  signal?: AbortSignal;
  /** A file whose appearance stops the turn: how `keel stop` reaches a turn running in another process. */
  stopFile?: string;
  hooks?: TurnHooks;
  retry?: Omit<RetryOptions, 'signal'>;
  /**
   * Runs before every model request (compaction hooks in here). Events it appends go through `append`, so
   * the turn's state stays in step with the log. An outcome it returns ends the turn before the request.
   */
  beforeRequest?: (context: BeforeRequestContext) => Promise<TurnOutcome | void>;
  /**
   * Issue #37: the session's model, effort or policy changed while this turn runs (the app's header), taken
   * before each model request: each is appended then (a policy a read-only session cannot take, or the one in
   * force, is dropped), and a new model's provider is built, so the change applies from the next request.
   */
  settingsChanges?: () => SettingsChange[];
  /**
   * Issue 33: facts that reach the session from outside while a turn runs (a subscribed MCP resource changed).
   * The turn records each as it arrives while its tools run, else right after the reply streaming then, and
   * before every request: the next request tells the model, the session view shows it (`onEvent`). Those that
   * arrive between turns wait for the next turn's host (core/mcp/resourceSubscriptions.ts records them then).
   */
  arrivals?: TurnArrivals;
  /**
   * Runs once per turn (segment), just before the first tool that can change files runs: an edit, a command,
   * a subagent (any kind but `read`). A `--commit direct` session photographs its folder here, so a turn that
   * runs no such tool costs no snapshot (main/core/persistent/turnCheckouts.ts). A failure fails the turn before the
   * tool starts.
   */
  beforeChanges?: () => Promise<void>;
  /**
   * Runs spawn_subagent calls as child sessions (main/core/subagents). Without one, such a call is answered
   * with a tool error.
   */
  subagents?: SubagentRunner;
  /**
   * Releases what the host started for the turn (its MCP servers); whoever built the host calls it once the
   * turn has ended. The engine never does.
   */
  dispose?: () => Promise<void>;
};

/** Facts from outside a running turn (TurnHost.arrivals): taken when recorded, watched while the turn runs. */
export type TurnArrivals = {
  /** The facts not yet recorded, handed over and forgotten. */
  take: () => ArrivedEvent[];
  /** Calls `arrived` when one arrives; returns the unwatch. */
  watch: (arrived: () => void) => () => void;
};

/** What may arrive from outside a turn. */
export type ArrivedEvent = Extract<NewEvent, { kind: 'mcp_resource_updated' }>;

/** What the engine hands the subagent runner for one unanswered call of a `subagent` tool. */
export type SubagentCall = {
  /** The call and what the log says about it in this session (its approval request and decision, if any). */
  record: CallRecord;
  /** The call's arguments, validated by the tool's schema. */
  args: Record<string, unknown>;
  state: SessionState;
  /** The turn's signal: aborting the parent aborts the child. */
  signal: AbortSignal;
  /** The turn's own append (events reach the state and the hooks). */
  append: (event: NewEvent) => SessionEvent;
  /** What the parent may still spend (its caps less its spend), which the child's spend must stay within. */
  remaining?: Caps;
};

/**
 * How a subagent call ended for this turn. `answered`: the runner appended the call's result (a
 * subagent_result, or a tool_result error when it refused). `awaiting_approval`: it appended an
 * approval_request for the call (the child's, mirrored). `interrupted`: the turn was stopped and the
 * child's partial answer is recorded. `failed`: nothing answers the call yet; resuming runs the child on.
 */
export type SubagentSettlement =
  | { status: 'answered' }
  | { status: 'awaiting_approval' }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string };

/** Settles subagent calls; implemented by main/core/subagents. */
export type SubagentRunner = {
  settle: (call: SubagentCall) => Promise<SubagentSettlement>;
  /** What these children spent, read from their own logs (the parent's caps count it). */
  spentBy?: (childIds: readonly string[]) => SpendFigures;
};

/** What a beforeRequest hook gets: the session state, the pinned provider, and the turn's own append. */
export type BeforeRequestContext = {
  state: SessionState;
  provider: ModelProvider;
  systemPrompt: string;
  signal: AbortSignal;
  append: (event: NewEvent) => SessionEvent;
};

/** How a turn ended. */
export type TurnOutcome =
  /** `stop`: the last reply ended unusually (a refusal, a content filter, the output limit), as a notice to show. */
  | { status: 'completed'; text: string; stop?: UnusualStop }
  | { status: 'awaiting_approval'; pending: EventOf<'approval_request'>[] }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string }
  | { status: 'budget_exhausted'; steps: number }
  /** A spend cap stopped the turn before a request (#31); `event` says what was spent and how to raise it. */
  | { status: 'budget_reached'; event: EventOf<'budget_reached'> };

/** A turn could not start (e.g. the pinned provider is not configured); nothing was appended. */
export class TurnSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TurnSetupError';
  }
}
