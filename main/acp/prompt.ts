import crypto from 'node:crypto';
import {
  type AgentContext,
  RequestError,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
  type ToolCallUpdate,
} from '@agentclientprotocol/sdk';
import {
  type AttachmentInput,
  allowedScopes,
  decidePlan,
  type PlanDecision,
  fetchHostOf,
  decideApproval,
  type ExpandedPrompt,
  expandSessionPrompt,
  guardNewTurn,
  type HarnessMessage,
  HarnessSessionBusyError,
  type Harness,
  type LocalHarnessSession,
  pendingApprovals,
  previewApproval,
  readSessionBox,
  homeStoredKeys,
  SessionLog,
  stageUploads,
  streamHarness,
  type TurnOutcome,
  TurnSetupError,
  UncommittedChangesError,
  uploadsNote,
  withWritableSession,
} from '../core/harness/index.js';
import type { ApprovalPreview } from '../common/harnessViews.js';
import type { SessionEvent } from '../common/events.js';
import { PRESENT_PLAN_TOOL, planTextOf } from '../common/planEvents.js';
import { rebuildDiffs } from './diffs.js';
import { decisionOf, permissionOptions, planDecisionOf, planOptions } from './permissions.js';
import type { PromptParts } from './promptBlocks.js';
import { PLAN_MODE_ID } from './sessions.js';
import { parseArguments, projectPath, toolKindOf, toolLocationsOf, toolTitleOf } from './toolCalls.js';
import type { PathView } from './toolCalls.js';
import { UpdateMapper } from './updates.js';

/*
 * One `session/prompt`: the user's blocks as one Keel message, turns run through the harness's
 * `streamHarness` (so checkouts are reset and committed around them as for every host), each part sent as a
 * `session/update`, and a turn that stops on an approval gate asks the editor (`session/request_permission`),
 * records the answer with the core's `decideApproval` and continues, until the turn settles. Cancel aborts
 * the turn's signal: Keel records the interruption, as its stop does.
 */

/** What a prompt needs from the connection. */
export type PromptHost = {
  harness: Harness;
  env: NodeJS.ProcessEnv;
  client: AgentContext;
  view: PathView;
  contextWindow: number;
};

/** Names the host in a `tool` grant's rule history. */
const VIA = 'an editor (keel acp)';

/** Runs the prompt to its end; the stop reason the editor gets. */
export async function runPrompt(
  host: PromptHost,
  sessionId: string,
  parts: PromptParts,
  signal: AbortSignal,
): Promise<StopReason> {
  try {
    // Requests a turn left open (here, in the app, after a crash) are answered first and that turn finished.
    const open = await answerPending(host, sessionId, signal);
    if (open === 'cancelled') return 'cancelled';
    if (open === 'answered') {
      const stop = await runUntilSettled(host, sessionId, undefined, signal);
      if (stop !== 'end_turn') return stop;
    }
    const session = (await host.harness.sessions.get(sessionId)) as LocalHarnessSession | undefined;
    if (!session) throw RequestError.sessionNotFound(sessionId);
    // `/name args` (a command file, an MCP prompt) expands as in every host; the expansion is what is recorded.
    const expanded = await expandSessionPrompt(session, parts.text, host.env);
    await guardNewTurn(session);
    // Issue #32: the prompt's resources staged once every check passed, named in the message as the app names them.
    const note = uploadsNote(await stageUploads(session.files, parts.uploads));
    return await runUntilSettled(
      host,
      sessionId,
      // A prompt of files alone is the list naming them.
      { ...expanded, prompt: expanded.prompt.trim() === '' ? note.trimStart() : expanded.prompt + note },
      signal,
      parts.attachments,
    );
  } catch (error) {
    throw asRequestError(error, sessionId);
  }
}

async function runUntilSettled(
  host: PromptHost,
  sessionId: string,
  expanded: ExpandedPrompt | undefined,
  signal: AbortSignal,
  attachments: readonly AttachmentInput[] = [],
): Promise<StopReason> {
  let messages: HarnessMessage[] =
    expanded === undefined
      ? []
      : [
          {
            id: crypto.randomUUID(),
            role: 'user' as const,
            content: expanded.prompt,
            ...(expanded.command ? { command: expanded.command } : {}),
            ...(attachments.length > 0 ? { attachments } : {}),
          },
        ];
  for (;;) {
    const outcome = await runTurn(host, sessionId, messages, signal);
    messages = [];
    if (outcome.status !== 'awaiting_approval') return stopReasonOf(outcome);
    if ((await answerPending(host, sessionId, signal)) !== 'answered') return 'cancelled';
  }
}

async function runTurn(
  host: PromptHost,
  sessionId: string,
  messages: HarnessMessage[],
  signal: AbortSignal,
): Promise<TurnOutcome> {
  const send = sender(host.client, sessionId);
  const mapper = new UpdateMapper({
    view: host.view,
    contextWindow: host.contextWindow,
    liveDiff: (_tool, _args, diff) => rebuildDiffs(host.view, diff),
  });
  const stream = streamHarness({
    harness: host.harness,
    session: sessionId,
    messages,
    signal,
    onPart: (part) => {
      for (const update of mapper.fromPart(part)) send.update(update);
    },
  });
  const { outcome } = await stream.result;
  await send.flushed();
  return outcome;
}

/** The stop reason of a settled turn; a failed turn is an error with Keel's message. */
function stopReasonOf(outcome: TurnOutcome): StopReason {
  switch (outcome.status) {
    case 'completed':
      // A hook's continue: false ends the turn as the user's own setup asked: an ordinary end.
      if (outcome.stop === undefined || outcome.stop.kind === 'hook') return 'end_turn';
      return outcome.stop.kind === 'refusal' || outcome.stop.kind === 'content_filter'
        ? 'refusal'
        : 'max_tokens';
    case 'interrupted':
      return 'cancelled';
    case 'budget_exhausted':
      return 'max_turn_requests';
    // A spend cap (#31): ACP has no reason of its own for it; the turn's budget_reached says what was spent.
    case 'budget_reached':
      return 'max_turn_requests';
    case 'awaiting_approval':
      return 'cancelled';
    case 'failed':
      throw RequestError.internalError(undefined, outcome.error);
  }
}

/**
 * Asks the editor about every pending request of the session, oldest first, recording each answer.
 * `none`: nothing was pending; `cancelled`: the prompt was cancelled meanwhile (the rest stays pending).
 */
async function answerPending(
  host: PromptHost,
  sessionId: string,
  signal: AbortSignal,
): Promise<'none' | 'answered' | 'cancelled'> {
  const asks = await pendingAsks(host, sessionId);
  if (asks.length === 0) return 'none';
  for (const ask of asks) {
    if (signal.aborted) return 'cancelled';
    let response;
    try {
      response = await host.client.request(
        'session/request_permission',
        { sessionId, toolCall: ask.toolCall, options: ask.options },
        { cancellationSignal: signal },
      );
    } catch (error) {
      if (signal.aborted) return 'cancelled';
      throw error;
    }
    if (ask.plan) {
      const decided = planDecisionOf(response.outcome);
      if (decided === undefined || signal.aborted) return 'cancelled';
      await withPlanDecision(host, sessionId, ask.seq, decided);
      continue;
    }
    const decision = decisionOf(response.outcome, ask.scopes, ask.host);
    if (decision === undefined || signal.aborted) return 'cancelled';
    // The continued turn reports the call's start and result (a denial: its error result).
    await withDecision(host, sessionId, ask.seq, decision);
  }
  return 'answered';
}

/**
 * Issue #30: records a plan's decision through the core (plan_approved with the policy chosen, or
 * plan_rejected), then tells the editor the mode now current: the policy, or still plan.
 */
async function withPlanDecision(
  host: PromptHost,
  sessionId: string,
  requestSeq: number,
  decision: PlanDecision,
): Promise<void> {
  await withWritableSession(host.harness.home, sessionId, (log) => {
    decidePlan(log, { ...decision, requestSeq });
    return Promise.resolve();
  });
  await host.client.notify('session/update', {
    sessionId,
    update: {
      sessionUpdate: 'current_mode_update',
      currentModeId: decision.decision === 'approve' ? decision.policy : PLAN_MODE_ID,
    },
  });
}

/** Records the answer through the core's one decision function (the log, and a `tool` grant's project rule). */
async function withDecision(
  host: PromptHost,
  sessionId: string,
  requestSeq: number,
  decision: NonNullable<ReturnType<typeof decisionOf>>,
): Promise<void> {
  await withWritableSession(host.harness.home, sessionId, (log) => {
    // reject_always: the denial also kept as the project's deny rule (core/setup rules, shown by keel rules).
    const { always, ...decided } = decision;
    decideApproval(host.harness.home, log, { requestSeq, ...decided }, VIA, { always: always === true });
    return Promise.resolve();
  });
}

type Ask = {
  seq: number;
  /** A present_plan request: answered by a plan decision, not an approval. */
  plan?: true;
  scopes: ReturnType<typeof allowedScopes>;
  /** A web_fetch request's host (its `domain:` option). */
  host?: string;
  options: ReturnType<typeof permissionOptions>;
  toolCall: PermissionToolCall;
};
type PermissionToolCall = ToolCallUpdate & { toolCallId: string };

/** The session's pending requests as permission questions, each with the change it would make. */
async function pendingAsks(host: PromptHost, sessionId: string): Promise<Ask[]> {
  const log = SessionLog.open(host.harness.home, sessionId, { write: false });
  try {
    const events = log.read();
    const pending = pendingApprovals(events);
    if (pending.length === 0) return [];
    const box = await readSessionBox(log, { env: host.env, keys: homeStoredKeys(host.harness.home) });
    const asks: Ask[] = [];
    for (const request of pending) {
      const args = parseArguments(request.arguments);
      let preview: ApprovalPreview | undefined;
      try {
        preview = await previewApproval(events, request.seq, box);
      } catch {
        preview = undefined;
      }
      if (request.tool === PRESENT_PLAN_TOOL) {
        asks.push(planAsk(request));
        continue;
      }
      const scopes = allowedScopes(request);
      const fetchHost = request.tool === 'web_fetch' ? fetchHostOf(request.arguments) : undefined;
      asks.push({
        seq: request.seq,
        scopes,
        ...(fetchHost !== undefined ? { host: fetchHost } : {}),
        options: permissionOptions(request, scopes, fetchHost),
        toolCall: {
          toolCallId: request.toolCallId,
          title: toolTitleOf(request.tool, args),
          kind: toolKindOf(request.tool),
          status: 'pending',
          locations: toolLocationsOf(request.tool, args, host.view),
          rawInput: args,
          content: askContent(host.view, request, preview),
        },
      });
    }
    return asks;
  } finally {
    log.close();
  }
}

/** A plan waiting for its decision as the editor's question: the plan's text, the approve and keep-planning options. */
function planAsk(request: Extract<SessionEvent, { kind: 'approval_request' }>): Ask {
  return {
    seq: request.seq,
    plan: true,
    scopes: [],
    options: planOptions(),
    toolCall: {
      toolCallId: request.toolCallId,
      title: 'Approve the plan',
      kind: 'switch_mode',
      status: 'pending',
      rawInput: parseArguments(request.arguments),
      content: [textContent(planTextOf(request.arguments) ?? request.arguments)],
    },
  };
}

/** What the editor shows with the question: each file's two texts, else the diff, the command and why. */
function askContent(
  view: PathView,
  request: { reason?: string; diff?: string; unknownOutcome?: boolean },
  preview: ApprovalPreview | undefined,
): ToolCallContent[] {
  const content: ToolCallContent[] = [];
  const files = preview?.files ?? (preview?.file ? [preview.file] : []);
  for (const file of files) {
    const shown = projectPath(view, file.path);
    if (shown !== undefined && file.proposed !== null && !file.binary && !file.tooLarge)
      content.push({ type: 'diff', path: shown, oldText: file.original, newText: file.proposed });
    else if (file.diff) content.push(textContent(`\`\`\`diff\n${file.diff}\n\`\`\``));
  }
  if (files.length === 0 && request.diff) content.push(textContent(`\`\`\`diff\n${request.diff}\n\`\`\``));
  if (preview?.command) {
    const network = preview.command.networkAllow;
    content.push(
      textContent(
        `$ ${preview.command.command}\nin ${preview.command.cwd}, in the box (${preview.command.sandbox.kind}), ` +
          `network: ${network.length > 0 ? network.join(', ') : 'none'}`,
      ),
    );
  }
  if (request.unknownOutcome)
    content.push(textContent('Keel stopped while this ran: its outcome is unknown.'));
  if (request.reason) content.push(textContent(`Why Keel asks: ${request.reason}`));
  return content;
}

const textContent = (text: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text } });

/** Sends a session's updates in order; `flushed` waits for the ones sent so far. */
function sender(client: AgentContext, sessionId: string) {
  let chain: Promise<void> = Promise.resolve();
  return {
    update(update: SessionUpdate) {
      const sending = client.notify('session/update', { sessionId, update });
      // A closed connection drops updates; the log keeps everything and a load replays it.
      chain = chain.then(() => sending.catch(() => undefined));
    },
    flushed: () => chain,
  };
}

/** Keel's refusals as JSON-RPC errors that say what to do. */
function asRequestError(error: unknown, sessionId: string): unknown {
  if (error instanceof RequestError) return error;
  if (error instanceof HarnessSessionBusyError)
    return RequestError.internalError(
      undefined,
      `${error.message}; wait for it to finish or stop it there (keel stop ${sessionId})`,
    );
  if (error instanceof UncommittedChangesError || error instanceof TurnSetupError)
    return RequestError.internalError(undefined, error.message);
  return error;
}
