import { unusualStop, type ToolImage, type UnusualStop } from '../../../../main/ipc/contract.js';
import type { EventOf, SessionEvent } from '../../api/types.js';

/** Where a tool call stands, as the log says. */
export type ToolStatus =
  'requested' | 'awaiting_approval' | 'denied' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A tool call with everything the log recorded about it, gathered in one row. */
export type ToolItem = {
  type: 'tool';
  key: string;
  seq: number;
  toolCallId: string;
  name: string;
  arguments: string;
  status: ToolStatus;
  /** The request seq of the newest approval request for this call, when one was made. */
  approval?: EventOf<'approval_request'>;
  decision?: EventOf<'approval_granted'> | EventOf<'approval_denied'>;
  result?: EventOf<'tool_result'>;
  /** A spawn_subagent call: the child session it runs (from subagent_started), openable as its own session. */
  subagent?: { childId: string; task: string };
  /** A spawn_subagent call's answer: the child's bounded final message. */
  subagentResult?: EventOf<'subagent_result'>;
};

/** One row of the transcript. Every row has a stable `key` (it survives re-folding). */
export type TranscriptItem =
  | { type: 'session_start'; key: string; event: EventOf<'session_created'> }
  | { type: 'user'; key: string; seq: number; at: string; content: string; images?: ToolImage[] }
  | {
      type: 'assistant';
      key: string;
      seq: number;
      at: string;
      content: string;
      /** The message's reasoning as people read it (thinking text, summaries), when it had any. */
      reasoning?: string;
      model?: string;
      /** Set when the user stopped the stream: the text ends where it was cut. */
      interrupted?: { reason?: string };
    }
  | ToolItem
  | { type: 'compaction'; key: string; event: EventOf<'compaction'> }
  | { type: 'model_changed'; key: string; event: EventOf<'model_changed'> }
  | { type: 'instructions'; key: string; event: EventOf<'instructions_loaded'> }
  | { type: 'error'; key: string; seq: number; at: string; message: string; code?: string }
  | { type: 'note'; key: string; seq: number; at: string; text: string }
  /** A reply that ended unusually: the model declined, a filter stopped it, it hit the output limit. */
  | { type: 'stop'; key: string; seq: number; at: string; stop: UnusualStop }
  /**
   * Changes that reached a Persistent Dir (persistent_commit): `turn` is the user message it belongs to (counting
   * every user message, as `history.revert {turn}` does), known when the log is loaded from its start.
   */
  | { type: 'commit'; key: string; seq: number; at: string; text: string; dir: string; turn?: number }
  /** The user's work Keel kept before writing into a folder (user_snapshot): restorable from its row. */
  | { type: 'snapshot'; key: string; seq: number; at: string; text: string }
  /** A rewind: the rows it set aside (after `toSeq`), folded under its marker. */
  | {
      type: 'rewound';
      key: string;
      seq: number;
      at: string;
      toSeq: number;
      /** Set when Keel set the turn aside itself because the provider declined it. */
      cause?: 'refusal';
      setAside: TranscriptItem[];
    };

/** The skill a load_skill call's row asked for (its `name` argument), when the row is one. */
/** A checkout dir in words: "project" is the project folder itself; another name is a folder given beside it. */
export function folderWords(dir: string): string {
  return dir === 'project' ? 'the project folder' : `the folder ${dir}`;
}

function loadedSkillName(item: TranscriptItem | undefined): string | undefined {
  if (item?.type !== 'tool') return undefined;
  try {
    const args = JSON.parse(item.arguments) as { name?: unknown; path?: unknown };
    if (typeof args.name !== 'string') return undefined;
    return typeof args.path === 'string' ? `${args.name} (${args.path})` : args.name;
  } catch {
    return undefined;
  }
}

/**
 * An assistant message's reasoning as text to read: thinking blocks and summaries in order, a note for
 * blocks the provider encrypted; undefined when there is none to show.
 */
export function reasoningText(parts: EventOf<'assistant_message'>['reasoning']): string | undefined {
  const texts: string[] = [];
  let redacted = 0;
  for (const part of parts ?? []) {
    if (part.type === 'thinking') texts.push(part.thinking);
    else if (part.type === 'reasoning') texts.push(...part.summary);
    else if (part.type === 'reasoning_text') texts.push(part.text);
    else redacted++;
  }
  if (redacted > 0)
    texts.push(`(${redacted} encrypted thinking block${redacted === 1 ? '' : 's'}, not shown)`);
  const text = texts.filter((piece) => piece.trim() !== '').join('\n\n');
  return text === '' ? undefined : text;
}

/**
 * Folds a session log (seq order) into transcript rows: messages in order, each tool call as one
 * row right after the message that asked for it, updated in place by its approval, start and
 * result events. Pure: the same events always give equal rows.
 */
export function foldTranscript(events: readonly SessionEvent[]): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  const toolRows = new Map<string, number>();
  // Turns count every user message from the log's start; a page that starts later cannot number them.
  let turn = events[0]?.seq === 1 ? 0 : undefined;
  const approvalRows = new Map<number, number>();

  const updateTool = (toolCallId: string, update: (item: ToolItem) => ToolItem): boolean => {
    const index = toolRows.get(toolCallId);
    const item = index === undefined ? undefined : items[index];
    if (index === undefined || item?.type !== 'tool') return false;
    items[index] = update(item);
    return true;
  };

  const addCalls = (
    seq: number,
    calls: readonly { id: string; name: string; arguments: string }[],
    cut: boolean,
  ) => {
    for (const toolCall of calls) {
      toolRows.set(toolCall.id, items.length);
      items.push({
        type: 'tool',
        key: `tool:${seq}:${toolCall.id}`,
        seq,
        toolCallId: toolCall.id,
        name: toolCall.name,
        arguments: toolCall.arguments,
        status: cut ? 'cancelled' : 'requested',
      });
    }
  };

  for (const event of events) {
    const key = `e${event.seq}`;
    switch (event.kind) {
      case 'session_created':
        items.push({ type: 'session_start', key, event });
        break;
      case 'user_message':
        if (turn !== undefined) turn++;
        // Issue #30: a custom command's expanded prompt says which command (and file) it came from.
        if (event.command)
          items.push({
            type: 'note',
            key: `${key}:command`,
            seq: event.seq,
            at: event.at,
            text: `Command /${event.command.name}${event.command.arguments ? ` ${event.command.arguments}` : ''} (${event.command.shown})`,
          });
        items.push({
          type: 'user',
          key,
          seq: event.seq,
          at: event.at,
          content: event.content,
          ...userImages(event.attachments),
        });
        break;
      case 'custom_listed':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text:
            `Skills offered: ${event.skills.map((skill) => skill.name).join(', ') || 'none'} · ` +
            `custom agents: ${event.agents.map((agent) => agent.name).join(', ') || 'none'}` +
            (event.problems?.length
              ? ` · ignored: ${event.problems.map((p) => `${p.path}:${p.line} ${p.message}`).join('; ')}`
              : ''),
        });
        break;
      case 'assistant_message': {
        const reasoning = reasoningText(event.reasoning);
        if (event.content.trim() !== '' || reasoning !== undefined)
          items.push({
            type: 'assistant',
            key,
            seq: event.seq,
            at: event.at,
            content: event.content,
            ...(reasoning !== undefined ? { reasoning } : {}),
            ...(event.model ? { model: event.model } : {}),
          });
        addCalls(event.seq, event.toolCalls, false);
        const stop = unusualStop(event.stopReason, event.stopDetails);
        if (stop) items.push({ type: 'stop', key: `${key}-stop`, seq: event.seq, at: event.at, stop });
        break;
      }
      case 'hook_ran':
        // Issue #30: a hook's `continue: false` ended the turn; its stopReason is the user's to read.
        if (event.stop)
          items.push({
            type: 'stop',
            key,
            seq: event.seq,
            at: event.at,
            stop: {
              kind: 'hook',
              message: `A ${event.event} hook (${event.source}) ended the turn: ${event.stopReason ?? 'no reason given'}`,
            },
          });
        break;
      case 'interrupted': {
        const reasoning = reasoningText(event.reasoning);
        items.push({
          type: 'assistant',
          key,
          seq: event.seq,
          at: event.at,
          content: event.content,
          ...(reasoning !== undefined ? { reasoning } : {}),
          interrupted: event.reason ? { reason: event.reason } : {},
        });
        addCalls(event.seq, event.toolCalls, true);
        break;
      }
      case 'approval_request': {
        const found = updateTool(event.toolCallId, (item) => {
          const { decision: _previous, ...rest } = item;
          return { ...rest, approval: event, status: 'awaiting_approval' };
        });
        if (found) approvalRows.set(event.seq, toolRows.get(event.toolCallId) ?? -1);
        else
          items.push({
            type: 'note',
            key,
            seq: event.seq,
            at: event.at,
            text: `Approval requested for ${event.tool}${event.reason ? `: ${event.reason}` : ''}`,
          });
        break;
      }
      case 'approval_granted':
      case 'approval_denied': {
        const index = approvalRows.get(event.requestSeq);
        const item = index === undefined ? undefined : items[index];
        if (index !== undefined && item?.type === 'tool') {
          items[index] = {
            ...item,
            decision: event,
            status: item.result
              ? item.status
              : item.subagent && !item.subagentResult
                ? // A mirrored request of a subagent: either way the child goes on (a denial is its to handle).
                  'running'
                : event.kind === 'approval_denied'
                  ? 'denied'
                  : 'requested',
          };
        } else {
          items.push({
            type: 'note',
            key,
            seq: event.seq,
            at: event.at,
            text:
              event.kind === 'approval_granted'
                ? `Approval granted (${event.scope})`
                : `Approval denied${event.reason ? `: ${event.reason}` : ''}`,
          });
        }
        break;
      }
      case 'tool_call_started':
        updateTool(event.toolCallId, (item) => (item.result ? item : { ...item, status: 'running' }));
        break;
      case 'tool_result':
        if (event.tool === 'load_skill' && !event.isError) {
          const skill = loadedSkillName(items[toolRows.get(event.toolCallId) ?? -1]);
          if (skill !== undefined)
            items.push({
              type: 'note',
              key: `${key}:skill`,
              seq: event.seq,
              at: event.at,
              text: `Skill loaded: ${skill}`,
            });
        }
        if (
          !updateTool(event.toolCallId, (item) => ({
            ...item,
            result: event,
            status: item.status === 'denied' ? 'denied' : event.isError ? 'failed' : 'succeeded',
          }))
        )
          items.push({
            type: 'note',
            key,
            seq: event.seq,
            at: event.at,
            text: `Result of ${event.tool ?? 'a tool call'}${event.isError ? ' (failed)' : ''}`,
          });
        break;
      case 'compaction':
        items.push({ type: 'compaction', key, event });
        break;
      case 'model_changed':
        items.push({ type: 'model_changed', key, event });
        break;
      case 'instructions_loaded':
        items.push({ type: 'instructions', key, event });
        break;
      case 'reasoning_changed':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Reasoning effort set to ${event.effort}`,
        });
        break;
      case 'policy_changed':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Policy changed to ${event.policy}`,
        });
        break;
      case 'budget_reached':
        // A spend cap held a request back (#31): shown as a notice with what was spent and how to raise it.
        items.push({
          type: 'error',
          key,
          seq: event.seq,
          at: event.at,
          message: event.message,
          code: 'budget_reached',
        });
        break;
      case 'budget_set':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Spend cap: ${[
            event.usd === undefined ? '' : event.usd === null ? 'no USD cap' : `USD ${event.usd}`,
            event.tokens === undefined
              ? ''
              : event.tokens === null
                ? 'no token cap'
                : `${event.tokens} tokens`,
          ]
            .filter(Boolean)
            .join(', ')}`,
        });
        break;
      case 'error':
        items.push({
          type: 'error',
          key,
          seq: event.seq,
          at: event.at,
          message: event.message,
          ...(event.code ? { code: event.code } : {}),
        });
        break;
      case 'approval_revoked':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Approval revoked${event.reason ? `: ${event.reason}` : ''}`,
        });
        break;
      case 'file_staged':
        items.push({ type: 'note', key, seq: event.seq, at: event.at, text: `File staged: ${event.path}` });
        break;
      // Issue 33: a subscribed MCP resource changed; the model is told at its next request.
      case 'mcp_resource_updated':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `MCP resource updated: ${event.uri} (${event.server}) changed since it was read; the agent is told`,
        });
        break;
      case 'persistent_commit':
        items.push({
          type: 'commit',
          key,
          seq: event.seq,
          at: event.at,
          dir: event.dir,
          ...(turn !== undefined && turn > 0 ? { turn } : {}),
          text: `Committed ${event.files.length} file${event.files.length === 1 ? '' : 's'} to ${folderWords(event.dir)}`,
        });
        break;
      case 'changes_reverted':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text:
            // Issue #37: in the user's terms: a turn, or "earlier changes" (never the log's event numbers).
            `Reverted ${event.turn !== undefined ? `turn ${event.turn}` : event.reverts.length === 1 ? 'an earlier change' : `${event.reverts.length} earlier changes`}: ` +
            `${event.files.length} file${event.files.length === 1 ? '' : 's'} of ${folderWords(event.dir)} put back`,
        });
        break;
      case 'user_snapshot':
        items.push({
          type: 'snapshot',
          key,
          seq: event.seq,
          at: event.at,
          text:
            `Your work in ${folderWords(event.dir)} was kept ${event.reason}: ` +
            `${event.files.length} file${event.files.length === 1 ? '' : 's'} (${event.files.map((f) => f.path).join(', ')})`,
        });
        break;
      case 'user_snapshot_restored':
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Restored your kept work: ${event.files.length} file${event.files.length === 1 ? '' : 's'} of ${folderWords(event.dir)} written back`,
        });
        break;
      case 'subagent_started':
        if (
          event.toolCallId === undefined ||
          !updateTool(event.toolCallId, (item) => ({
            ...item,
            subagent: { childId: event.childId, task: event.task },
            status: item.subagentResult ? item.status : 'running',
          }))
        )
          items.push({
            type: 'note',
            key,
            seq: event.seq,
            at: event.at,
            text: `Subagent started: ${event.task}`,
          });
        break;
      case 'subagent_result':
        if (
          event.toolCallId !== undefined &&
          updateTool(event.toolCallId, (item) => ({
            ...item,
            subagent: item.subagent ?? { childId: event.childId, task: '' },
            subagentResult: event,
            status: 'succeeded',
          }))
        )
          break;
        items.push({
          type: 'note',
          key,
          seq: event.seq,
          at: event.at,
          text: `Subagent finished${event.outOfBudget ? ' (out of budget)' : ''}${event.truncated ? ' (result truncated)' : ''}`,
        });
        break;
    }
  }
  return foldSetAside(items, events);
}

/** The seq of the event a row starts at. */
function seqOf(item: TranscriptItem): number {
  return 'event' in item ? item.event.seq : item.seq;
}

/**
 * Moves the rows a rewind set aside under one `rewound` row at their place (a rewind set aside by a later
 * one goes under that one's row); a rewind whose rows are not loaded still gets its row. Pure.
 */
function foldSetAside(items: TranscriptItem[], events: readonly SessionEvent[]): TranscriptItem[] {
  const rewinds = events.filter((e): e is EventOf<'rewound'> => e.kind === 'rewound');
  if (rewinds.length === 0) return items;
  const setAsideBy = new Map<number, number>();
  const stack: number[] = [];
  for (const event of events) {
    if (event.kind === 'rewound') {
      while (stack.length > 0 && (stack.at(-1) as number) > event.toSeq)
        setAsideBy.set(stack.pop() as number, event.seq);
    }
    stack.push(event.seq);
  }
  const groups = new Map<number, Extract<TranscriptItem, { type: 'rewound' }>>();
  for (const event of rewinds) {
    groups.set(event.seq, {
      type: 'rewound',
      key: `rewound-${event.seq}`,
      seq: event.seq,
      at: event.at,
      toSeq: event.toSeq,
      ...(event.cause ? { cause: event.cause } : {}),
      setAside: [],
    });
  }
  const out: TranscriptItem[] = [];
  const placed = new Set<number>();
  const place = (item: TranscriptItem): void => {
    const by = setAsideBy.get(seqOf(item));
    const group = by === undefined ? undefined : groups.get(by);
    // The notice of a refusal stays in view: it says why the turn was set aside.
    if (group === undefined || (group.cause === 'refusal' && item.type === 'stop')) {
      out.push(item);
      return;
    }
    if (!placed.has(group.seq)) {
      placed.add(group.seq);
      place(group);
    }
    group.setAside.push(item);
  };
  const pending = [...rewinds];
  for (const item of items) {
    // A rewind with nothing loaded to fold still shows where it happened.
    while (pending.length > 0 && (pending[0] as EventOf<'rewound'>).seq < seqOf(item)) {
      const rewind = pending.shift() as EventOf<'rewound'>;
      const group = groups.get(rewind.seq);
      if (group && !placed.has(rewind.seq)) {
        placed.add(rewind.seq);
        place(group);
      }
    }
    place(item);
  }
  for (const rewind of pending) {
    const group = groups.get(rewind.seq);
    if (group && !placed.has(rewind.seq)) {
      placed.add(rewind.seq);
      place(group);
    }
  }
  return out;
}

/**
 * Splits streaming Markdown into blocks that can no longer change (ended by a blank line outside a
 * code fence) and the tail still being written, so a long reply re-parses only its last block per delta.
 */
export function splitSettledMarkdown(text: string): { settled: string[]; tail: string } {
  const settled: string[] = [];
  let fence: string | undefined;
  let blockStart = 0;
  let position = 0;
  while (position <= text.length) {
    const end = text.indexOf('\n', position);
    if (end === -1) break;
    const line = text.slice(position, end);
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    } else if (fence === undefined && line.trim() === '' && end > blockStart) {
      const block = text.slice(blockStart, end).replace(/\n+$/, '');
      if (block.trim() !== '') settled.push(block);
      blockStart = end + 1;
    }
    position = end + 1;
  }
  return { settled, tail: text.slice(blockStart) };
}

/** The images attached to a prompt (issue #32), shown under it like a tool's images; PDFs are named in its text. */
function userImages(attachments: EventOf<'user_message'>['attachments']): { images?: ToolImage[] } {
  const images: ToolImage[] = [];
  for (const file of attachments ?? []) {
    if (file.mimeType !== 'application/pdf')
      images.push({ handle: file.handle, mimeType: file.mimeType, bytes: file.bytes });
  }
  return images.length > 0 ? { images } : {};
}
