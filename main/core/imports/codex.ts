import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ModelPin, ReasoningEffort, ReasoningPart, ToolCall } from '../../common/events.js';
import { findModel } from '../../providers/catalogue.js';
import {
  isRecord,
  parseLine,
  readJsonLines,
  type FileDigest,
  type JsonLine,
  type LineProblem,
} from './jsonl.js';
import { EventBuilder, type MappedSession } from './mapped.js';
import { mapCodexCall } from './tools.js';

/*
 * Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`), from the public protocol's
 * RolloutLine: since mid-2025 every line is `{timestamp, type, payload}` with type session_meta (id, cwd,
 * cli_version, …), turn_context (cwd, model, effort, policies), response_item (the Responses API items:
 * message, reasoning with `encrypted_content`, function_call / function_call_output, custom_tool_call and its
 * output, local_shell_call), compacted (the summary that replaced the history) or event_msg (what the UI
 * showed: user_message, agent_message, token_count, turn_aborted, …). Older rollouts have no envelope: the
 * first line is the session meta itself (`{id, timestamp, instructions, git}`), then bare response items and
 * `{"record_type":"state"}` lines. The response items are the conversation; of the event messages only an
 * aborted turn says something they do not.
 */

const Content = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: z.string().optional(),
});
const Message = z.looseObject({ type: z.literal('message'), role: z.string(), content: z.array(Content) });
const Reasoning = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).default([]),
  content: z
    .array(z.looseObject({ type: z.string(), text: z.string().optional() }))
    .nullable()
    .optional(),
  encrypted_content: z.string().nullable().optional(),
});
const FunctionCall = z.looseObject({
  type: z.literal('function_call'),
  name: z.string().min(1),
  arguments: z.string(),
  call_id: z.string().min(1),
});
const Output = z.union([
  z.string(),
  z.looseObject({ content: z.string(), success: z.boolean().nullable().optional() }),
  z.array(Content),
]);
const FunctionOutput = z.looseObject({
  type: z.enum(['function_call_output', 'custom_tool_call_output']),
  call_id: z.string().min(1),
  output: Output,
});
const CustomCall = z.looseObject({
  type: z.literal('custom_tool_call'),
  name: z.string().min(1),
  input: z.string(),
  call_id: z.string().min(1),
});
const LocalShell = z.looseObject({
  type: z.literal('local_shell_call'),
  call_id: z.string().nullable().optional(),
  id: z.string().nullable().optional(),
  action: z.looseObject({
    type: z.string(),
    command: z.array(z.string()),
    working_directory: z.string().nullable().optional(),
    timeout_ms: z.number().nullable().optional(),
  }),
});
const ResponseItem = z.union([Message, Reasoning, FunctionCall, FunctionOutput, CustomCall, LocalShell]);
type ResponseItem = z.infer<typeof ResponseItem>;

const SessionMeta = z.looseObject({
  id: z.string().min(1),
  timestamp: z.string().min(1),
  cwd: z.string().optional(),
  cli_version: z.string().optional(),
  instructions: z.string().nullable().optional(),
  /** A fork (`codex fork`, a thread forked in the app): the thread whose history it starts from. */
  forked_from_id: z.string().nullable().optional(),
  /** `"cli"`, `"vscode"`, `"exec"`, …; a subagent's `{"subagent": {"thread_spawn": {"parent_thread_id", …}}}`. */
  source: z.unknown().optional(),
  agent_nickname: z.string().nullable().optional(),
  agent_role: z.string().nullable().optional(),
});
const TurnContext = z.looseObject({
  cwd: z.string().optional(),
  model: z.string().min(1),
  effort: z.string().nullable().optional(),
});
/**
 * What replaced the history: `message`, the summary (local compaction; empty in newer rollouts), and since late
 * 2025 `replacement_history`, the items the conversation went on from (the user's recent messages kept, the
 * summary as a message, or a remote compaction's encrypted item).
 */
const Compacted = z.looseObject({
  message: z.string().nullable().optional(),
  replacement_history: z.array(z.unknown()).nullable().optional(),
});
const EventMsg = z.looseObject({ type: z.string(), reason: z.string().optional() });

/** Response item types that are not conversation Keel can replay (web searches, …): skipped quietly. */
const QUIET_ITEMS = new Set(['web_search_call', 'image_generation_call', 'ghost_snapshot', 'other']);

/** Texts Codex puts in the history as user messages that the user did not write (context it injects). */
const INJECTED =
  /^\s*(<environment_context>|<user_instructions>|<user_shell_command>|<permissions instructions>|# AGENTS\.md instructions)/;

/** The context window Keel assumes for an OpenAI model its catalogue does not know. */
const CODEX_DEFAULT_WINDOW = 272_000;

export type CodexMeta = { id: string; timestamp: string; cwd: string | undefined };

/** Reads the first line of a rollout only: what `--dry-run` and discovery need. */
export async function readCodexMeta(file: string): Promise<CodexMeta | undefined> {
  for await (const { value } of readJsonLines(file, () => undefined)) {
    const payload = isRecord(value) && value['type'] === 'session_meta' ? value['payload'] : value;
    const meta = SessionMeta.safeParse(payload);
    return meta.success
      ? { id: meta.data.id, timestamp: meta.data.timestamp, cwd: meta.data.cwd }
      : undefined;
  }
  return undefined;
}

/** Maps one rollout to Keel events, naming each line it cannot read and skipping it. */
export async function mapCodexRollout(
  file: string,
  problem: (problem: LineProblem) => void,
  digest?: (digest: FileDigest) => void,
  /** The Keel id a thread becomes: a `spawn_agent` call answered with its thread's id links to that session. */
  childIdOf?: (threadId: string) => string,
): Promise<MappedSession | undefined> {
  const builder = new EventBuilder();
  let meta: CodexMeta | undefined;
  /** The thread this one was spawned by (a subagent) or forked from, and the subagent's name. */
  let parent: MappedSession['parent'];
  let title: string | undefined;
  let pin: ModelPin | undefined;
  /** The model the session started with: its session_created pin (later ones are model_changed events). */
  let firstPin: ModelPin | undefined;
  let project: string | undefined;
  /** The assistant side of a turn so far: items stream as reasoning, text, calls; results close it. */
  let pending: { at: string; texts: string[]; calls: ToolCall[]; reasoning: ReasoningPart[] } | undefined;
  let lineNumber = 0;
  /** spawn_agent calls (multi-agent Codex) by call id: the task they gave. */
  const spawnTasks = new Map<string, string>();

  const flush = (): void => {
    if (!pending) return;
    const { at, texts, calls, reasoning } = pending;
    pending = undefined;
    builder.assistant({
      at,
      content: texts.join('\n\n'),
      toolCalls: calls,
      reasoning,
      ...(pin ? { model: pin.model } : {}),
    });
  };
  const assistantSide = (at: string) => (pending ??= { at, texts: [], calls: [], reasoning: [] });

  const item = (at: string, value: ResponseItem): void => {
    switch (value.type) {
      case 'message': {
        const text = value.content.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join('');
        if (value.role === 'assistant') {
          if (text !== '') assistantSide(at).texts.push(text);
          return;
        }
        if (value.role !== 'user') return; // developer / system: Codex's own instructions, not the conversation
        flush();
        if (INJECTED.test(text)) return;
        for (const part of value.content) {
          const data = part.type === 'input_image' ? dataUrlBytes(part.image_url) : undefined;
          if (data) builder.userImage(at, data.bytes, data.mediaType);
        }
        builder.user(at, text);
        return;
      }
      case 'reasoning': {
        const side = assistantSide(at);
        const position = side.calls.length > 0 ? { afterCalls: side.calls.length } : {};
        const summary = value.summary.map((s) => s.text);
        if (value.encrypted_content) {
          // Byte-exact: replayed to the same model as it came. Rollouts do not keep the item's id; one is made
          // from where the item sits, so the same line always gets the same id.
          side.reasoning.push({
            type: 'reasoning',
            id: value.id ?? reasoningId(meta?.id ?? file, lineNumber),
            encryptedContent: value.encrypted_content,
            summary,
            ...position,
          });
        } else {
          const text = [...summary, ...(value.content ?? []).flatMap((c) => (c.text ? [c.text] : []))].join(
            '\n',
          );
          if (text !== '') side.reasoning.push({ type: 'reasoning_text', text, ...position });
        }
        return;
      }
      case 'function_call':
        if (value.name === 'spawn_agent') spawnTasks.set(value.call_id, spawnTask(value.arguments));
        assistantSide(at).calls.push({
          id: value.call_id,
          ...mapCodexCall(value.name, value.arguments, project),
        });
        return;
      case 'custom_tool_call':
        assistantSide(at).calls.push({
          id: value.call_id,
          ...mapCodexCall(value.name, value.input, project),
        });
        return;
      case 'local_shell_call': {
        const id = value.call_id ?? value.id;
        if (!id) return;
        const { command, working_directory, timeout_ms } = value.action;
        const args = JSON.stringify({
          command,
          ...(working_directory ? { workdir: working_directory } : {}),
          ...(timeout_ms ? { timeout_ms } : {}),
        });
        assistantSide(at).calls.push({ id, ...mapCodexCall('local_shell', args, project) });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        flush();
        const { output } = value;
        const text =
          typeof output === 'string'
            ? output
            : Array.isArray(output)
              ? output.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join('\n')
              : output.content;
        const failed = !Array.isArray(output) && typeof output !== 'string' && output.success === false;
        // A spawned agent's call is answered by its thread (`{"agent_id": …}`): the subagent, a child session.
        const task = spawnTasks.get(value.call_id);
        const agent = task !== undefined && !failed ? agentIdOf(text) : undefined;
        if (agent !== undefined && childIdOf && builder.isOpen(value.call_id)) {
          builder.subagent(at, value.call_id, childIdOf(agent), task as string, text);
          return;
        }
        builder.result({
          at,
          toolCallId: value.call_id,
          content: text,
          ...(failed ? { isError: true } : {}),
        });
        return;
      }
    }
  };

  const turnContext = (at: string, context: z.infer<typeof TurnContext>): void => {
    project ??= context.cwd;
    const next = codexPin(context.model, context.effort ?? undefined);
    if (!pin) pin = firstPin = next;
    else if (next.model !== pin.model) {
      flush();
      pin = next;
      builder.push({ kind: 'model_changed', at, ...next });
    }
  };

  const line = (entry: JsonLine): void => {
    lineNumber = entry.line;
    const value = entry.value;
    if (!isRecord(value)) {
      problem({ file, line: entry.line, message: 'not a JSON object; skipped' });
      return;
    }
    const enveloped =
      typeof value['timestamp'] === 'string' && 'payload' in value && typeof value['type'] === 'string';
    if (!enveloped) return legacyLine(entry, value);
    const at = value['timestamp'] as string;
    const payload = { ...entry, value: value['payload'] };
    switch (value['type']) {
      case 'session_meta': {
        const parsed = parseLine(SessionMeta, file, payload, 'Codex session_meta', problem);
        if (parsed && !meta) {
          meta = { id: parsed.id, timestamp: parsed.timestamp, cwd: parsed.cwd };
          project ??= parsed.cwd;
          parent = parentOf(parsed);
          const name = [parsed.agent_nickname, parsed.agent_role && `(${parsed.agent_role})`].filter(Boolean);
          if (name.length > 0) title = name.join(' ');
        }
        return;
      }
      case 'turn_context': {
        const parsed = parseLine(TurnContext, file, payload, 'Codex turn_context', problem);
        if (parsed) turnContext(at, parsed);
        return;
      }
      case 'response_item':
        return responseItem(at, payload);
      case 'compacted': {
        const parsed = parseLine(Compacted, file, payload, 'Codex compacted', problem);
        if (!parsed) return;
        flush();
        builder.compaction(at, compactionSummary(parsed));
        return;
      }
      case 'event_msg': {
        const parsed = parseLine(EventMsg, file, payload, 'Codex event_msg', problem);
        if (parsed?.type === 'turn_aborted') {
          flush();
          builder.interrupted(
            at,
            `the turn was ${parsed.reason === 'interrupted' ? 'interrupted' : `aborted (${parsed.reason ?? 'no reason given'})`} in Codex`,
          );
        }
        return;
      }
      default:
        problem({
          file,
          line: entry.line,
          message: `a line of type ${JSON.stringify(value['type'])} Keel does not read; skipped`,
        });
    }
  };

  const responseItem = (at: string, entry: JsonLine): void => {
    const type = isRecord(entry.value) ? entry.value['type'] : undefined;
    if (typeof type === 'string' && QUIET_ITEMS.has(type)) return;
    const parsed = parseLine(ResponseItem, file, entry, 'Codex response item', problem);
    if (parsed) item(at, parsed);
  };

  /** A rollout from before the envelope: the meta line, then bare items timed by the session's start. */
  const legacyLine = (entry: JsonLine, value: Record<string, unknown>): void => {
    if (value['record_type'] === 'state') return;
    if (!meta && value['type'] === undefined) {
      const parsed = parseLine(SessionMeta, file, entry, 'Codex session meta', problem);
      if (parsed) meta = { id: parsed.id, timestamp: parsed.timestamp, cwd: parsed.cwd };
      return;
    }
    const at =
      typeof value['timestamp'] === 'string'
        ? value['timestamp']
        : (meta?.timestamp ?? new Date(0).toISOString());
    responseItem(at, entry);
  };

  for await (const entry of readJsonLines(file, problem, digest)) line(entry);
  flush();
  if (!meta) {
    problem({ file, line: 1, message: 'no session_meta line: not a Codex rollout; skipped' });
    return undefined;
  }
  return {
    tool: 'codex',
    sourceId: meta.id,
    file,
    project,
    title,
    ...(parent ? { parent } : {}),
    pin: firstPin,
    startedAt: meta.timestamp,
    events: builder.events,
    files: builder.files,
    children: [],
    droppedResults: builder.droppedResults,
  };
}

/** The task a `spawn_agent` call gave (`message`, or its input items' text). */
function spawnTask(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (isRecord(parsed) && typeof parsed['message'] === 'string') return parsed['message'];
    const items = isRecord(parsed) && Array.isArray(parsed['items']) ? parsed['items'] : [];
    const texts = items.flatMap((item) =>
      isRecord(item) && typeof item['text'] === 'string' ? [item['text']] : [],
    );
    return texts.join('\n') || args;
  } catch {
    return args;
  }
}

/** The thread id a `spawn_agent` call's output names, or undefined. */
function agentIdOf(output: string): string | undefined {
  try {
    const parsed = JSON.parse(output) as unknown;
    const id = isRecord(parsed) ? parsed['agent_id'] : undefined;
    return typeof id === 'string' && id !== '' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A subagent's parent thread (`source.subagent.thread_spawn.parent_thread_id`), else the thread it forked from. */
function parentOf(meta: z.infer<typeof SessionMeta>): MappedSession['parent'] {
  const sub = isRecord(meta.source) ? meta.source['subagent'] : undefined;
  const spawn = isRecord(sub) ? sub['thread_spawn'] : undefined;
  const spawnedBy = isRecord(spawn) ? spawn['parent_thread_id'] : undefined;
  if (typeof spawnedBy === 'string' && spawnedBy !== '') return { sourceId: spawnedBy, as: 'subagent' };
  if (meta.forked_from_id) return { sourceId: meta.forked_from_id, as: 'fork' };
  return undefined;
}

/**
 * A `compacted` line as the summary Keel's compaction holds: what the conversation went on from. With a
 * `replacement_history`, that is its messages in order (Codex keeps the user's recent messages and the summary
 * there; its own injected context and instructions are left out), each under its speaker; `message` (the older
 * rollouts' only field) when the history does not already hold it. An encrypted remote summary cannot be read
 * here: it is named, so the summary never silently claims the history was empty.
 */
export function compactionSummary(compacted: z.infer<typeof Compacted>): string {
  const parts: string[] = [];
  let encrypted = 0;
  for (const value of compacted.replacement_history ?? []) {
    if (isRecord(value) && (value['type'] === 'compaction' || value['type'] === 'compaction_summary')) {
      encrypted++;
      continue;
    }
    const message = Message.safeParse(value);
    if (!message.success || (message.data.role !== 'user' && message.data.role !== 'assistant')) continue;
    const text = message.data.content.flatMap((c) => (c.text !== undefined ? [c.text] : [])).join('');
    if (text.trim() === '' || INJECTED.test(text)) continue;
    parts.push(`${message.data.role === 'user' ? 'User' : 'Assistant'}: ${text}`);
  }
  const summary = compacted.message?.trim() ?? '';
  if (summary !== '' && !parts.some((part) => part.includes(summary))) parts.push(summary);
  if (encrypted > 0)
    parts.push(`[${encrypted} encrypted compaction summary item(s) Codex kept, which only OpenAI can read]`);
  return parts.length > 0 ? parts.join('\n\n') : '[Codex compacted the conversation and kept no summary]';
}

/** The id a reasoning item the rollout kept without one gets: stable for the session and line. */
export function reasoningId(sessionId: string, line: number): string {
  return `rs_${createHash('sha256').update(`${sessionId}:${line}`).digest('hex').slice(0, 40)}`;
}

/** Codex efforts as Keel's (`minimal` is Keel's `low`; `none` is `off`). */
function effortOf(effort: string | undefined): ReasoningEffort | undefined {
  switch (effort) {
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
    case 'high':
      return effort;
    case 'xhigh':
      return 'high';
    case 'none':
      return 'off';
    default:
      return undefined;
  }
}

/** The pin of a Codex model: OpenAI's Responses API, its window from the catalogue. */
export function codexPin(model: string, effort?: string): ModelPin {
  const reasoningEffort = effortOf(effort);
  return {
    provider: 'openai',
    model,
    contextWindow: findModel(model)?.contextWindow ?? CODEX_DEFAULT_WINDOW,
    ...(reasoningEffort ? { reasoningEffort } : {}),
  };
}

function dataUrlBytes(url: string | undefined): { bytes: Buffer; mediaType: string } | undefined {
  const match = url === undefined ? null : /^data:([\w/+.-]+);base64,(.*)$/s.exec(url);
  if (!match) return undefined;
  return { mediaType: match[1] as string, bytes: Buffer.from(match[2] as string, 'base64') };
}
