import type { Diff, PlanEntry, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import type { PlanItem, ReasoningPart, SessionEvent } from '../common/events.js';
import type { HarnessStreamPart } from '../core/harness/index.js';
import { parseArguments, type PathView, toolKindOf, toolLocationsOf, toolTitleOf } from './toolCalls.js';

/*
 * Keel's log and a turn's stream parts as ACP `session/update`s. The log is the truth: a live turn and a
 * replay (`session/load`) go through the same event mapping, so an editor that loads a session sees what it
 * would have seen live (message text, thoughts, tool calls with their kind, locations and results, the plan,
 * usage), once each. Pure apart from `liveDiff`, the host's hook that reads a changed file's new text.
 */

/** A tool result's content is cut for the editor; the whole output stays in the log and its artifact. */
const RESULT_CHARS = 8_000;

/** Text cut at `max` characters, lines kept (the editor shows it as Markdown), the cut said. */
const cut = (value: string, max = RESULT_CHARS) =>
  value.length <= max
    ? value
    : `${value.slice(0, max)}\n… (${value.length - max} more characters in Keel's log)`;

/** What the mapping needs to know about the session. */
export type UpdateContext = {
  view: PathView;
  /** The pinned model's context window (usage_update's size). */
  contextWindow: number;
  /** Live only: the change a finished file tool made as an ACP diff (old and new text), when it can be rebuilt. */
  liveDiff?: (tool: string, args: Record<string, unknown>, unifiedDiff: string) => Diff[] | undefined;
};

/** Turns events (and, live, stream parts) into updates; one instance per replay or per turn. */
export class UpdateMapper {
  /** Calls seen so far: name and arguments text, by the model's call id. */
  private readonly calls = new Map<string, { tool: string; args: string }>();
  /** Calls already announced with a `tool_call` update. */
  private readonly announced = new Set<string>();
  /** Approval requests by seq: the call each answers. */
  private readonly requests = new Map<number, string>();

  constructor(private readonly context: UpdateContext) {}

  /** A live part of a turn: deltas become chunks at once; events go through `fromEvent`. */
  fromPart(part: HarnessStreamPart): SessionUpdate[] {
    switch (part.type) {
      case 'text':
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: part.text } }];
      case 'reasoning':
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: part.text } }];
      case 'tool_call':
        // The model started a call: shown at once, its arguments follow with the assistant message.
        this.announced.add(part.id);
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: part.id,
            title: toolTitleOf(part.name, {}),
            kind: toolKindOf(part.name),
            status: 'pending',
          },
        ];
      case 'event':
        return this.fromEvent(part.event, true);
      // Live command output, notices, commits and subagents' events stay in Keel's own views.
      default:
        return [];
    }
  }

  /**
   * One logged event. `live`: its text already streamed as chunks (so it is not sent again) and its diff may
   * be rebuilt from the file as it is now; a replay sends the text itself.
   */
  fromEvent(event: SessionEvent, live = false): SessionUpdate[] {
    switch (event.kind) {
      case 'user_message':
        return live ? [] : [{ sessionUpdate: 'user_message_chunk', content: text(event.content) }];
      case 'assistant_message':
      case 'interrupted': {
        const updates: SessionUpdate[] = [];
        if (!live) {
          const thought = reasoningText(event.reasoning);
          if (thought) updates.push({ sessionUpdate: 'agent_thought_chunk', content: text(thought) });
          if (event.content)
            updates.push({ sessionUpdate: 'agent_message_chunk', content: text(event.content) });
        }
        for (const call of event.toolCalls) updates.push(this.announce(call.id, call.name, call.arguments));
        if (event.kind === 'interrupted') {
          // A call the stop cut off never ran (the projection closes it as cancelled).
          for (const call of event.toolCalls)
            updates.push({ sessionUpdate: 'tool_call_update', toolCallId: call.id, status: 'failed' });
        } else if (event.usage) {
          const usage = event.usage;
          updates.push({
            sessionUpdate: 'usage_update',
            used:
              usage.inputTokens +
              (usage.cacheReadTokens ?? 0) +
              (usage.cacheWriteTokens ?? 0) +
              usage.outputTokens,
            size: this.context.contextWindow,
          });
        }
        return updates;
      }
      case 'tool_call_started':
        return [{ sessionUpdate: 'tool_call_update', toolCallId: event.toolCallId, status: 'in_progress' }];
      case 'tool_result':
        return this.result(event, live);
      case 'approval_request':
        this.requests.set(event.seq, event.toolCallId);
        return [{ sessionUpdate: 'tool_call_update', toolCallId: event.toolCallId, status: 'pending' }];
      case 'approval_denied': {
        const toolCallId = this.requests.get(event.requestSeq);
        if (toolCallId === undefined) return [];
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId,
            status: 'failed',
            content: [content(`Denied${event.reason ? `: ${event.reason}` : ''}`)],
          },
        ];
      }
      case 'error':
        return [{ sessionUpdate: 'agent_message_chunk', content: text(`\n\nKeel: ${event.message}\n`) }];
      default:
        return [];
    }
  }

  private announce(id: string, tool: string, argsText: string): SessionUpdate {
    this.calls.set(id, { tool, args: argsText });
    const args = parseArguments(argsText);
    const fields = {
      toolCallId: id,
      title: toolTitleOf(tool, args),
      kind: toolKindOf(tool),
      locations: toolLocationsOf(tool, args, this.context.view),
      rawInput: args,
    };
    if (this.announced.has(id)) return { sessionUpdate: 'tool_call_update', ...fields };
    this.announced.add(id);
    return { sessionUpdate: 'tool_call', status: 'pending', ...fields };
  }

  private result(event: Extract<SessionEvent, { kind: 'tool_result' }>, live: boolean): SessionUpdate[] {
    const call = this.calls.get(event.toolCallId);
    const tool = event.tool ?? call?.tool ?? '';
    const args = parseArguments(call?.args ?? '{}');
    const body: ToolCallContent[] = [];
    const diffs = live && event.diff ? this.context.liveDiff?.(tool, args, event.diff) : undefined;
    if (diffs && diffs.length > 0) body.push(...diffs.map((diff) => ({ type: 'diff' as const, ...diff })));
    else if (event.diff) body.push(content(`\`\`\`diff\n${cut(event.diff)}\n\`\`\``));
    if (event.content) body.push(content(cut(event.content)));
    const updates: SessionUpdate[] = [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: event.toolCallId,
        status: event.isError ? 'failed' : 'completed',
        content: body,
        rawOutput: {
          ...(event.exitCode !== undefined && event.exitCode !== null ? { exitCode: event.exitCode } : {}),
          ...(event.artifact ? { artifact: event.artifact } : {}),
        },
      },
    ];
    if (tool === 'todo' && !event.isError) {
      const plan = planOf(args);
      if (plan) updates.push({ sessionUpdate: 'plan', entries: plan });
    }
    return updates;
  }
}

/** The replay of a whole log (the visible events, seq order) as updates. */
export function replayUpdates(events: readonly SessionEvent[], context: UpdateContext): SessionUpdate[] {
  const mapper = new UpdateMapper(context);
  return events.flatMap((event) => mapper.fromEvent(event));
}

/** The todo tool's list as ACP plan entries (the whole plan: ACP replaces it with each update). */
export function planOf(args: Record<string, unknown>): PlanEntry[] | undefined {
  if (!Array.isArray(args.todos)) return undefined;
  const entries: PlanEntry[] = [];
  for (const item of args.todos as unknown[]) {
    const step = item as Partial<PlanItem>;
    if (typeof step.content !== 'string') return undefined;
    const status = step.status === 'completed' || step.status === 'in_progress' ? step.status : 'pending';
    entries.push({ content: step.content, priority: 'medium', status });
  }
  return entries;
}

function reasoningText(parts: readonly ReasoningPart[] | undefined): string {
  if (!parts) return '';
  return parts
    .map((part) => {
      if (part.type === 'thinking') return part.thinking;
      if (part.type === 'reasoning') return part.summary.join('\n');
      if (part.type === 'reasoning_text') return part.text;
      return '';
    })
    .filter((piece) => piece !== '')
    .join('\n');
}

const text = (value: string) => ({ type: 'text' as const, text: value });
const content = (value: string): ToolCallContent => ({ type: 'content', content: text(value) });
