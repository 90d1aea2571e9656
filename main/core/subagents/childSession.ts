import path from 'node:path';
import { inheritPermissionRules } from '../setup/rules.js';
import { pendingApprovals } from '../approvals/state.js';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { clip } from '../../common/text.js';
import { newSessionId } from '../log/sessionId.js';
import { sessionNetworkAllow } from '../log/imported.js';
import {
  SessionLockedError,
  SessionLog,
  SessionNotFoundError,
  type CreateSessionInit,
} from '../log/sessionLog.js';
import {
  runTurn,
  type SubagentCall,
  type SubagentRunner,
  type SubagentSettlement,
  type TurnHost,
  type TurnOutcome,
} from '../turn/engine.js';
import { readPersistentConfig, writePersistentConfig } from '../persistent/config.js';
import { makeSessionFolders } from '../paths.js';
import { foldSession } from '../turn/state.js';
import { ceilingFrom, emptySpend, spentTotal } from '../turn/budget.js';
import { spendOf } from '../turn/loadState.js';
import type { SpendFigures } from '../../common/events.js';
import { createToolRegistry, type ToolRegistry } from '../../tools/registry.js';
import { subagentLimits, type SpawnSubagentArgs } from '../../tools/spawnSubagent.js';
import type { CustomAgent } from '../custom/index.js';
import { agentPin, agentSystemPrompt, agentUse, chooseAgentTools } from './agents.js';
import { findMirrored, forwardedDecision, mirrorRequest } from './approvals.js';
import { composeResult, latestAnswer, type SubagentEnding } from './result.js';
import {
  childPolicy,
  chooseChildTools,
  modeOfTools,
  readSubagentSpec,
  resolveBudget,
  SUBAGENT_METADATA_KEY,
  type SubagentSpec,
} from './spec.js';

/**
 * Added after the parent's system prompt in a child's pinned system prompt. Fixed text, so the child's
 * cached prefix is as stable as the parent's.
 */
export const SUBAGENT_SYSTEM_NOTE = [
  'You are a subagent: another Keel session gave you one task and will see nothing but your final message.',
  'Make that message a concise, self-contained answer: what you observed, with file paths and line numbers, and what you could not find or do.',
  'Do not paste large tool output into it; summarise, and name paths instead.',
].join('\n');

/** Options of createSubagentRunner. */
export type SubagentRunnerOptions = {
  /** The Keel home the parent's session lives in; children are sessions of the same home. */
  home: string;
  /**
   * The parent's host. Children share its box (workspace, OS sandbox, network policy, protected paths,
   * redactor), its provider factory and its retry settings; each gets its own log, registry and signal.
   */
  parent: TurnHost;
  /** Bytes of a child's answer that enter the parent (default subagentLimits.resultMaxBytes). */
  resultMaxBytes?: number;
  /**
   * Builds a child's beforeRequest hook (compaction) from the child's own log and tools. The parent's hook is
   * never reused: it is bound to the parent's log.
   */
  childBeforeRequest?: (child: SessionLog, registry: ToolRegistry) => TurnHost['beforeRequest'];
  /** Issue #30: the custom agents a call may name (`agent`), from the session's setup. */
  agents?: readonly CustomAgent[];
};

/**
 * The subagent runner of one parent host: settles a spawn_subagent call by running (or resuming) its child
 * session to an end. The parent log gets subagent_started before the child runs and subagent_result (the
 * bounded answer and the child's id) when it ends; a child's approval request is mirrored into the parent
 * and the user's decision forwarded back; aborting the parent aborts the child.
 */
export function createSubagentRunner(options: SubagentRunnerOptions): SubagentRunner {
  return {
    settle: (call) => new SubagentCallRun(options, call).settle(),
    spentBy: (childIds) => childrenSpent(options.home, childIds),
  };
}

/**
 * What children spent, each read from its own log (a child the parent recorded but never created spent
 * nothing). Read from the logs, so a crash of the parent loses none of it.
 */
export function childrenSpent(home: string, childIds: readonly string[]): SpendFigures {
  const total: SpendFigures = { usd: 0, tokens: 0 };
  for (const id of childIds) {
    let log: SessionLog;
    try {
      log = SessionLog.open(home, id);
    } catch (error) {
      if (error instanceof SessionNotFoundError) continue;
      throw error;
    }
    try {
      const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
      const model = created?.kind === 'session_created' ? created.model : 'unknown';
      const spent = spentTotal(spendOf(log, model));
      total.usd += spent.usd;
      total.tokens += spent.tokens;
    } finally {
      log.close();
    }
  }
  return total;
}

/** One settle of one spawn_subagent call. */
class SubagentCallRun {
  private readonly parent: TurnHost;
  private readonly args: SpawnSubagentArgs;

  constructor(
    private readonly options: SubagentRunnerOptions,
    private readonly call: SubagentCall,
  ) {
    this.parent = options.parent;
    // The engine validated the arguments with the tool's own schema.
    this.args = call.args as SpawnSubagentArgs;
  }

  private get toolCallId(): string {
    return this.call.record.call.id;
  }

  async settle(): Promise<SubagentSettlement> {
    const { record } = this.call;
    let started = this.findStarted();
    if (!started) {
      const chosen = this.chooseTools();
      if (!chosen.ok) {
        this.call.append({
          kind: 'tool_result',
          toolCallId: this.toolCallId,
          tool: record.call.name,
          content: JSON.stringify({ error: chosen.error }),
          isError: true,
        });
        return { status: 'answered' };
      }
      // The link is recorded before the child exists: a crash in between leaves an id that resume creates.
      started = this.call.append({
        kind: 'subagent_started',
        childId: newSessionId(),
        toolCallId: this.toolCallId,
        task: this.args.task,
        tools: chosen.tools,
        ...(chosen.agent ? { agent: agentUse(chosen.agent) } : {}),
      }) as EventOf<'subagent_started'>;
      this.notice(`subagent ${started.childId} started: ${clip(this.args.task, 80)}`);
    }
    if (record.request && !record.decision) return { status: 'awaiting_approval' };
    let child: SessionLog;
    try {
      child = this.openChild(started);
    } catch (error) {
      if (error instanceof SessionLockedError) {
        return {
          status: 'failed',
          error: `subagent ${started.childId} is open in another process (pid ${error.holderPid}); stop it there, then resume this session`,
        };
      }
      throw error;
    }
    try {
      if (record.request && record.decision) this.forwardDecision(child, started.childId);
      return await this.run(child, started);
    } finally {
      child.close();
    }
  }

  /** The child's tools: a custom agent's (issue #30), or the ones the call asked for. */
  private chooseTools(): { ok: true; tools: string[]; agent?: CustomAgent } | { ok: false; error: string } {
    const name = this.args.agent;
    if (name === undefined) return chooseChildTools(this.parent.registry, this.args.tools);
    const agents = this.options.agents ?? [];
    const agent = agents.find((candidate) => candidate.name === name);
    if (!agent) {
      const known = agents.map((candidate) => candidate.name).join(', ') || 'none are set up';
      return {
        ok: false,
        error: `there is no custom agent "${name}" (agents: ${known}). No subagent was started.`,
      };
    }
    if (this.args.tools !== undefined) {
      return {
        ok: false,
        error: `agent "${name}" brings its own tools: leave tools out. No subagent was started.`,
      };
    }
    const chosen = chooseAgentTools(this.parent.registry, agent);
    if (chosen.dropped.length > 0) {
      this.notice(
        `agent ${name}: tools it names that this session does not give it: ${chosen.dropped.join(', ')}`,
      );
    }
    return { ok: true, tools: chosen.tools, agent };
  }

  /** The subagent_started of this call, if an earlier run (or a crashed one) recorded it. */
  private findStarted(): EventOf<'subagent_started'> | undefined {
    const events = this.parent.log.read({ fromSeq: this.call.record.assistantSeq });
    let found: EventOf<'subagent_started'> | undefined;
    for (const event of events)
      if (event.kind === 'subagent_started' && event.toolCallId === this.toolCallId) found = event;
    return found;
  }

  private openChild(started: EventOf<'subagent_started'>): SessionLog {
    try {
      return SessionLog.open(this.options.home, started.childId, { write: true });
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
    }
    const child = SessionLog.create(this.options.home, this.childInit(started), { id: started.childId });
    // The child works in its parent's workspace; continued on its own later, it gets checkouts of the same
    // Persistent Dirs and its parent's pathRoot, so the paths it used still mean the same files.
    const parentDirs = readPersistentConfig(this.parent.log.dir);
    if (parentDirs) {
      makeSessionFolders(child.dir);
      writePersistentConfig(child.dir, parentDirs);
    }
    // The child's first events are not a turn's: the parent's host still learns of them (a UI opens the child).
    for (const event of child.read()) this.forwardEvent(child.id, event);
    return child;
  }

  /** The child's session_created: the parent's pin, project and box settings, its own tools and budget. */
  private childInit(started: EventOf<'subagent_started'>): CreateSessionInit {
    const { state } = this.call;
    const [created] = this.parent.log.read({ fromSeq: 1, limit: 1 });
    if (created?.kind !== 'session_created')
      throw new Error(`session ${this.parent.log.id} has no session_created event`);
    const allow = sessionNetworkAllow(created);
    const mode = modeOfTools(this.parent.registry, started.tools);
    const spec: SubagentSpec = {
      parentId: this.parent.log.id,
      toolCallId: this.toolCallId,
      tools: started.tools,
      budget: resolveBudget(this.args.budget),
    };
    const basePrompt =
      this.parent.systemPrompt.trim() === ''
        ? SUBAGENT_SYSTEM_NOTE
        : `${this.parent.systemPrompt}\n\n${SUBAGENT_SYSTEM_NOTE}`;
    // A custom agent's own prompt follows Keel's; its model (on the parent's provider) is the child's pin.
    const systemPrompt = started.agent ? agentSystemPrompt(basePrompt, started.agent) : basePrompt;
    const chosen = started.agent ? agentPin(state.pin, started.agent) : { pin: state.pin };
    if (chosen.note) this.notice(chosen.note);
    const pin = chosen.pin;
    return {
      projectFolder: state.projectFolder,
      provider: pin.provider,
      model: pin.model,
      ...(pin.baseUrl === undefined ? {} : { baseUrl: pin.baseUrl }),
      contextWindow: pin.contextWindow,
      ...(pin.reasoningEffort ? { reasoningEffort: pin.reasoningEffort } : {}),
      toolMode: mode,
      policy: childPolicy(state.policy, mode),
      systemPrompt,
      // The parent's allowlist as it counts here (none when the parent came from an imported file).
      ...(allow.length > 0 ? { networkAllow: allow } : {}),
      ...(created.protectedGlobs ? { protectedGlobs: created.protectedGlobs } : {}),
      ...(created.pathRoot ? { pathRoot: created.pathRoot } : {}),
      ...(created.extraBody === undefined ? {} : { extraBody: created.extraBody }),
      parentId: this.parent.log.id,
      metadata: { [SUBAGENT_METADATA_KEY]: spec },
    };
  }

  /**
   * The user decided the mirrored request in the parent: the same decision goes to the child's request.
   * A grant wider than `once` is then revoked in the parent, so it authorises the child only. Idempotent:
   * after a crash it forwards nothing twice.
   */
  private forwardDecision(child: SessionLog, childId: string): void {
    const { record, state } = this.call;
    const mirror = record.request;
    const decision = record.decision;
    // A plan's decision answers the parent's own present_plan call: a child has none to forward it to.
    if (!mirror || !decision || decision.kind === 'plan_approved' || decision.kind === 'plan_rejected')
      return;
    const target = findMirrored(pendingApprovals(child.read()), mirror);
    if (target) {
      const appended = child.append(forwardedDecision(decision, target.seq), {
        expectedLastSeq: child.lastSeq(),
      });
      if (appended.ok) for (const event of appended.events) this.forwardEvent(childId, event);
      this.notice(`forwarded the decision on request ${mirror.seq} to subagent ${childId}`);
    }
    if (decision.kind === 'approval_granted' && state.grants.has(decision.seq)) {
      this.call.append({
        kind: 'approval_revoked',
        grantSeq: decision.seq,
        reason: `forwarded to subagent ${childId}; the grant applies there only`,
      });
    }
  }

  /** Runs the child to an end of this run and records what the parent gets. */
  private async run(child: SessionLog, started: EventOf<'subagent_started'>): Promise<SubagentSettlement> {
    const events = child.read();
    const created = events[0];
    const spec = created?.kind === 'session_created' ? readSubagentSpec(created) : undefined;
    if (created?.kind !== 'session_created' || !spec)
      throw new Error(`session ${child.id} is not a subagent session (no subagent metadata)`);
    const childState = foldSession(events, { spend: emptySpend() });
    const { budget } = spec;
    const usedTurns = events.filter((event) => event.kind === 'assistant_message').length;
    let usedTokens = childState.totals.inputTokens + childState.totals.outputTokens;

    const controller = new AbortController();
    let budgetStop: string | undefined;
    const stopForBudget = (reason: string) => {
      budgetStop ??= reason;
      controller.abort(reason);
    };
    const tokenReason = () => `out of budget: used ${usedTokens} tokens (maxTokens ${budget.maxTokens})`;
    const onParentAbort = () => controller.abort(`stopped with its parent session ${this.parent.log.id}`);
    if (this.call.signal.aborted) onParentAbort();
    else this.call.signal.addEventListener('abort', onParentAbort, { once: true });
    if (usedTokens >= budget.maxTokens) stopForBudget(tokenReason());
    const timer = setTimeout(
      () => stopForBudget(`out of budget: ran for ${budget.wallTimeMs} ms (wallTimeMs ${budget.wallTimeMs})`),
      budget.wallTimeMs,
    );

    const parent = this.parent;
    // The parent's permission rules hold in the child too (a deny refuses there as well), in its own log.
    inheritPermissionRules(parent.log, child);
    const registry = createToolRegistry(created.toolMode, { only: spec.tools });
    const beforeRequest = this.options.childBeforeRequest?.(child, registry);
    const host: TurnHost = {
      log: child,
      createProvider: parent.createProvider,
      registry,
      tools: { ...parent.tools, sessionDir: child.dir, artifactsDir: child.artifactsDir },
      sandboxAvailable: parent.sandboxAvailable,
      systemPrompt: created.systemPrompt ?? parent.systemPrompt,
      // The child works in the parent's workspace: the same project instructions apply (in its own log), and
      // its requests end with the same environment block (with its own policy).
      ...(parent.instructions ? { instructions: parent.instructions } : {}),
      ...(parent.environment ? { environment: parent.environment } : {}),
      // Issue #30: the parent's tool hooks hold for the child's calls (a refusing PreToolUse hook too), and its
      // SubagentStop hooks run when the child would end; the session's own (SessionStart, prompts, Stop) stay
      // the parent's.
      ...(parent.lifecycleHooks
        ? {
            lifecycleHooks: parent.lifecycleHooks.filter(
              (hook) =>
                hook.event === 'PreToolUse' || hook.event === 'PostToolUse' || hook.event === 'SubagentStop',
            ),
          }
        : {}),
      stopEvent: 'SubagentStop',
      maxSteps: Math.max(0, budget.maxTurns - usedTurns),
      // The parent's remaining budget on top of what the child spent already: its spend stays within it.
      ...(this.call.remaining
        ? {
            budgetCeiling: ceilingFrom(spentTotal(childState.spend ?? emptySpend()), this.call.remaining),
            budgetOwner: this.parent.budgetOwner ?? this.parent.log.id,
          }
        : {}),
      signal: controller.signal,
      hooks: {
        onEvent: (event) => {
          if (event.kind === 'assistant_message' && event.usage) {
            usedTokens += event.usage.inputTokens + event.usage.outputTokens;
            if (usedTokens >= budget.maxTokens) stopForBudget(tokenReason());
          }
          if (event.kind === 'tool_call_started') this.notice(`subagent ${child.id}: → ${event.tool}`);
          this.forwardEvent(child.id, event);
        },
        // The parent's host publishes these under the child's id, so the child's commands can be watched,
        // flow-controlled and killed like a top-level session's.
        onToolOutput: (toolCallId, chunk) =>
          parent.hooks?.onSubagentToolOutput?.(child.id, toolCallId, chunk),
        onNotice: (text) => this.notice(`subagent ${child.id}: ${text}`),
      },
      ...(parent.stopFile ? { stopFile: path.join(child.dir, path.basename(parent.stopFile)) } : {}),
      ...(parent.maxOutputTokens ? { maxOutputTokens: parent.maxOutputTokens } : {}),
      ...(parent.retry ? { retry: parent.retry } : {}),
      ...(beforeRequest ? { beforeRequest } : {}),
    };

    let outcome: TurnOutcome;
    try {
      // The task is the child's first user message; a child that has it already resumes where it was.
      outcome = await runTurn(host, childState.turns === 0 ? { prompt: started.task } : {});
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { status: 'failed', error: `subagent ${child.id} could not run: ${reason}` };
    } finally {
      clearTimeout(timer);
      this.call.signal.removeEventListener('abort', onParentAbort);
    }
    return this.settleOutcome(child, outcome, {
      budgetStop,
      turns: `${usedTurns + (outcome.status === 'budget_exhausted' ? outcome.steps : 0)} of ${budget.maxTurns}`,
    });
  }

  private settleOutcome(
    child: SessionLog,
    outcome: TurnOutcome,
    spent: { budgetStop: string | undefined; turns: string },
  ): SubagentSettlement {
    const { budgetStop } = spent;
    switch (outcome.status) {
      case 'awaiting_approval': {
        const request = outcome.pending[0] ?? pendingApprovals(child.read())[0];
        if (!request)
          return {
            status: 'failed',
            error: `subagent ${child.id} stopped for an approval it did not record`,
          };
        this.call.append(mirrorRequest(child.id, this.toolCallId, request));
        this.notice(`subagent ${child.id} is waiting for approval (its request ${request.seq})`);
        return { status: 'awaiting_approval' };
      }
      case 'failed':
        return {
          status: 'failed',
          error: `subagent ${child.id} failed: ${outcome.error}; resume this session to run it on`,
        };
      case 'completed':
        this.answer(child, { kind: 'completed' });
        return { status: 'answered' };
      case 'budget_reached':
        this.answer(child, { kind: 'out_of_budget', reason: outcome.event.message });
        return { status: 'answered' };
      case 'budget_exhausted':
        this.answer(child, {
          kind: 'out_of_budget',
          reason: `out of budget: made ${spent.turns} model requests (maxTurns)`,
        });
        return { status: 'answered' };
      case 'interrupted': {
        if (budgetStop !== undefined && !this.call.signal.aborted) {
          this.answer(child, { kind: 'out_of_budget', reason: budgetStop });
          return { status: 'answered' };
        }
        const last = child.read({ fromSeq: child.lastSeq() })[0];
        const reason =
          last?.kind === 'interrupted' && last.reason !== undefined ? last.reason : 'stopped by the user';
        this.answer(child, { kind: 'interrupted', reason });
        // Stopped with the parent: the parent's turn ends too. Stopped alone (keel stop CHILD): it goes on.
        return this.call.signal.aborted ? { status: 'interrupted' } : { status: 'answered' };
      }
    }
  }

  /** Appends the call's subagent_result: the bounded, redacted answer and the child's handle. */
  private answer(child: SessionLog, ending: SubagentEnding): void {
    const composed = composeResult({
      childId: child.id,
      answer: latestAnswer(child.read()),
      ending,
      maxBytes: this.options.resultMaxBytes ?? subagentLimits.resultMaxBytes,
    });
    const event: SessionEvent = this.call.append({
      kind: 'subagent_result',
      childId: child.id,
      toolCallId: this.toolCallId,
      content: this.parent.tools.redactor.redact(composed.content),
      ...(composed.truncated ? { truncated: true } : {}),
      ...(ending.kind === 'out_of_budget' ? { outOfBudget: true } : {}),
    });
    this.notice(
      `subagent ${child.id} answered (${Buffer.byteLength(composed.content)} bytes, event ${event.seq})`,
    );
  }

  /** Hands one committed event of the child to the parent's host, with the child's id. */
  private forwardEvent(childId: string, event: SessionEvent): void {
    this.parent.hooks?.onSubagentEvent?.(childId, event);
  }

  private notice(text: string): void {
    this.parent.hooks?.onNotice?.(text);
  }
}
