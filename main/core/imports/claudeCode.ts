import { z } from 'zod';
import type { ModelPin, ReasoningPart, ToolCall, ToolImage, Usage } from '../../common/events.js';
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
import { mapClaudeCall } from './tools.js';

/*
 * Claude Code's session files (`~/.claude/projects/<folder>/<session>.jsonl`), from their public
 * descriptions: one record per line; `user` and `assistant` records carry the API message and are chained by
 * `uuid` / `parentUuid` (a record whose parent is not the one before it starts a branch: a rewind or an edited
 * prompt); `isSidechain` records are a subagent's (kept in the same file by older versions, in
 * `<session>/subagents/agent-<id>.jsonl` or `agent-<id>.jsonl` by newer ones); a compaction is a `system`
 * record (`subtype: compact_boundary`) followed by a user record with `isCompactSummary` holding the summary;
 * `summary` records title the session. Newer versions write each content block of one API message as its
 * own record (same `message.id`): they are one message again here. Fields differ between versions (no
 * `version`, `gitBranch`, `isSidechain` in the oldest), so only what is read is required.
 */

const Text = z.looseObject({ type: z.literal('text'), text: z.string() });
const Thinking = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
});
const Redacted = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const Image = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.string(), media_type: z.string().optional(), data: z.string().optional() }),
});
const ToolUse = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
const Other = z.looseObject({ type: z.string() });
const ToolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([z.string(), z.array(z.union([Text, Image, Other]))])
    .nullable()
    .optional(),
  is_error: z.boolean().nullable().optional(),
});
const Block = z.union([Text, Thinking, Redacted, Image, ToolUse, ToolResult, Other]);
type Block = z.infer<typeof Block>;

const envelope = {
  uuid: z.string().min(1),
  parentUuid: z.string().nullable().optional(),
  isSidechain: z.boolean().optional(),
  sessionId: z.string().optional(),
  agentId: z.string().optional(),
  timestamp: z.string().min(1),
  cwd: z.string().optional(),
  version: z.string().optional(),
};

const UserRecord = z.looseObject({
  ...envelope,
  type: z.literal('user'),
  message: z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(Block)]) }),
  isMeta: z.boolean().optional(),
  isCompactSummary: z.boolean().optional(),
  toolUseResult: z.unknown().optional(),
});

const AssistantRecord = z.looseObject({
  ...envelope,
  type: z.literal('assistant'),
  message: z.looseObject({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.array(Block),
    stop_reason: z.string().nullable().optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().int().nonnegative().optional(),
        output_tokens: z.number().int().nonnegative().optional(),
        cache_read_input_tokens: z.number().int().nonnegative().nullable().optional(),
        cache_creation_input_tokens: z.number().int().nonnegative().nullable().optional(),
      })
      .optional(),
  }),
  isApiErrorMessage: z.boolean().optional(),
});

const SystemRecord = z.looseObject({
  type: z.literal('system'),
  uuid: z.string().optional(),
  timestamp: z.string().optional(),
  subtype: z.string().optional(),
  content: z.string().optional(),
  compactMetadata: z.looseObject({ preTokens: z.number().optional() }).optional(),
});

const SummaryRecord = z.looseObject({
  type: z.literal('summary'),
  summary: z.string(),
  leafUuid: z.string().optional(),
});

type UserRecord = z.infer<typeof UserRecord>;
type AssistantRecord = z.infer<typeof AssistantRecord>;
type MessageRecord = UserRecord | AssistantRecord;

/** Record types that are the tool's own bookkeeping (undo snapshots, the input queue): nothing to import. */
const BOOKKEEPING = new Set(['file-history-snapshot', 'queue-operation', 'progress']);

/** A Claude Code file read: its message records in file order, titles, compaction boundaries. */
type ClaudeFile = {
  records: { record: MessageRecord; line: number }[];
  summaries: { summary: string; leafUuid?: string }[];
  /** uuid of the record a compaction summary follows -> the boundary's pre-compaction tokens. */
  boundaries: Map<number, number | undefined>;
};

/** Reads one Claude Code file, naming each line it cannot read and skipping it. */
export async function readClaudeFile(
  file: string,
  problem: (problem: LineProblem) => void,
  digest?: (digest: FileDigest) => void,
): Promise<ClaudeFile> {
  const out: ClaudeFile = { records: [], summaries: [], boundaries: new Map() };
  for await (const line of readJsonLines(file, problem, digest)) readRecord(file, line, out, problem);
  return out;
}

function readRecord(file: string, line: JsonLine, out: ClaudeFile, problem: (p: LineProblem) => void): void {
  const type = isRecord(line.value) ? line.value['type'] : undefined;
  switch (type) {
    case 'user': {
      const record = parseLine(UserRecord, file, line, 'Claude Code user', problem);
      if (record) out.records.push({ record, line: line.line });
      return;
    }
    case 'assistant': {
      const record = parseLine(AssistantRecord, file, line, 'Claude Code assistant', problem);
      if (record) out.records.push({ record, line: line.line });
      return;
    }
    case 'summary': {
      const record = parseLine(SummaryRecord, file, line, 'Claude Code summary', problem);
      if (record)
        out.summaries.push({
          summary: record.summary,
          ...(record.leafUuid ? { leafUuid: record.leafUuid } : {}),
        });
      return;
    }
    case 'system': {
      const record = parseLine(SystemRecord, file, line, 'Claude Code system', problem);
      // Where the boundary sits among the records: the summary record after it makes the compaction.
      if (record?.subtype === 'compact_boundary')
        out.boundaries.set(out.records.length, record.compactMetadata?.preTokens);
      return;
    }
    default:
      if (typeof type === 'string' && BOOKKEEPING.has(type)) return;
      problem({
        file: file,
        line: line.line,
        message: `a record of type ${JSON.stringify(type)} Keel does not read; skipped`,
      });
  }
}

const INTERRUPTED = /^\[Request interrupted by user( for tool use)?\]$/;

/** The context window Keel assumes for a Claude model its catalogue does not know. */
const CLAUDE_DEFAULT_WINDOW = 200_000;

/** Claude Code's id for a model it made up itself (a local error shown as a message): not a model. */
const SYNTHETIC_MODEL = '<synthetic>';

export type ClaudeSource = {
  file: string;
  /** Subagent files of this session (`subagents/agent-*.jsonl`, or `agent-*.jsonl` naming this session). */
  agentFiles: readonly string[];
};

/**
 * Maps one Claude Code session (its file, and its subagents' files) to Keel events. `childIdOf` names the
 * Keel session a subagent becomes (so the parent's subagent events can point at it).
 */
export async function mapClaudeSession(
  source: ClaudeSource,
  childIdOf: (sessionId: string, agentKey: string) => string,
  problem: (problem: LineProblem) => void,
  digest?: (digest: FileDigest) => void,
): Promise<MappedSession | undefined> {
  const main = await readClaudeFile(source.file, problem, digest);
  const ownRecords = main.records.filter(({ record }) => record.isSidechain !== true);
  const first = ownRecords[0]?.record;
  if (!first) return undefined;
  const sessionId = first.sessionId ?? pathId(source.file);

  // Subagents: each agent file, and each chain of sidechain records an older version kept in this file.
  const children: MappedSession[] = [];
  const childByPrompt = new Map<string, string>();
  const childByAgent = new Map<string, string>();
  for (const agentFile of source.agentFiles) {
    const agent = await readClaudeFile(agentFile, problem);
    const agentId = agent.records[0]?.record.agentId ?? pathId(agentFile).replace(/^agent-/, '');
    const childId = childIdOf(sessionId, `agent-${agentId}`);
    const child = mapRecords(agent, { file: agentFile, sourceId: `${sessionId}/agent-${agentId}` });
    if (!child) continue;
    children.push(child);
    childByAgent.set(agentId, childId);
    const prompt = firstUserText(agent.records.map((r) => r.record));
    if (prompt !== undefined) childByPrompt.set(prompt, childId);
  }
  for (const chain of sidechains(main.records)) {
    const root = chain[0]?.record as MessageRecord;
    const childId = childIdOf(sessionId, `side-${root.uuid}`);
    const child = mapRecords(
      { records: chain, summaries: [], boundaries: new Map() },
      {
        file: source.file,
        sourceId: `${sessionId}/side-${root.uuid}`,
      },
    );
    if (!child) continue;
    children.push(child);
    const prompt = firstUserText(chain.map((r) => r.record));
    if (prompt !== undefined) childByPrompt.set(prompt, childId);
  }

  const mainFile: ClaudeFile = {
    ...main,
    records: ownRecords,
    boundaries: reindexBoundaries(main, ownRecords),
  };
  const session = mapRecords(mainFile, {
    file: source.file,
    sourceId: sessionId,
    subagent: (record, prompt) => {
      const agentId = isRecord(record.toolUseResult) ? record.toolUseResult['agentId'] : undefined;
      return (
        (typeof agentId === 'string' ? childByAgent.get(agentId) : undefined) ?? childByPrompt.get(prompt)
      );
    },
  });
  if (!session) return undefined;
  session.children = children;
  return session;
}

/** The boundaries' positions among the session's own records (sidechain records left out). */
function reindexBoundaries(
  file: ClaudeFile,
  own: readonly { record: MessageRecord; line: number }[],
): Map<number, number | undefined> {
  if (own.length === file.records.length) return file.boundaries;
  const moved = new Map<number, number | undefined>();
  const ownBefore: number[] = [];
  let count = 0;
  for (const { record } of file.records) {
    ownBefore.push(count);
    if (record.isSidechain !== true) count++;
  }
  ownBefore.push(count);
  for (const [index, tokens] of file.boundaries) moved.set(ownBefore[index] ?? count, tokens);
  return moved;
}

/** Chains of sidechain records in a main file, each from a root (whose parent is no sidechain record). */
function sidechains(records: readonly { record: MessageRecord; line: number }[]) {
  const chains = new Map<string, { record: MessageRecord; line: number }[]>();
  const chainOf = new Map<string, string>();
  for (const entry of records) {
    const { record } = entry;
    if (record.isSidechain !== true) continue;
    const parent = record.parentUuid ? chainOf.get(record.parentUuid) : undefined;
    const root = parent ?? record.uuid;
    chainOf.set(record.uuid, root);
    const chain = chains.get(root) ?? [];
    chain.push(entry);
    chains.set(root, chain);
  }
  return [...chains.values()];
}

function firstUserText(records: readonly MessageRecord[]): string | undefined {
  for (const record of records) {
    if (record.type !== 'user' || record.isMeta) continue;
    const text = userText(record.message.content);
    if (text !== '') return text;
  }
  return undefined;
}

function userText(content: string | Block[]): string {
  if (typeof content === 'string') return content;
  return content
    .filter((block): block is z.infer<typeof Text> => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n\n');
}

function pathId(file: string): string {
  return (file.split(/[\\/]/).pop() ?? file).replace(/\.jsonl$/, '');
}

/** One assistant API message, gathered from the records that carried its blocks. */
type Pending = { records: AssistantRecord[]; blocks: Block[] };

function mapRecords(
  file: ClaudeFile,
  options: {
    file: string;
    sourceId: string;
    subagent?: (record: UserRecord, prompt: string) => string | undefined;
  },
): MappedSession | undefined {
  const first = file.records[0]?.record;
  if (!first) return undefined;
  const builder = new EventBuilder();
  const project = file.records.find(({ record }) => record.cwd)?.record.cwd;
  /** uuid -> placeholder seq of the newest event its record made (or the one before it, for records that made none). */
  const seqOf = new Map<string, number>();
  const taskPrompts = new Map<string, string>();
  let pin: ModelPin | undefined;
  /** The model the session started with: its session_created pin (a later one is a model_changed event). */
  let firstPin: ModelPin | undefined;
  let previousUuid: string | undefined;
  let pending: Pending | undefined;

  const flush = (): void => {
    if (!pending) return;
    const { records, blocks } = pending;
    pending = undefined;
    const last = records[records.length - 1] as AssistantRecord;
    const model = records.find((r) => r.message.model && r.message.model !== SYNTHETIC_MODEL)?.message.model;
    if (records.some((r) => r.isApiErrorMessage) || last.message.model === SYNTHETIC_MODEL) {
      const text = blocks
        .flatMap((b) => (b.type === 'text' ? [(b as { text: string }).text] : []))
        .join('\n');
      const seq = builder.error(
        records[0]?.timestamp ?? last.timestamp,
        text || 'an error Claude Code reported',
      );
      for (const record of records) seqOf.set(record.uuid, seq);
      return;
    }
    if (model && !pin) pin = firstPin = pinOf(model);
    else if (model && pin && model !== pin.model) {
      // /model in Claude Code: the session goes on with another model, as a switch here would record it.
      pin = pinOf(model);
      builder.push({ kind: 'model_changed', at: records[0]?.timestamp ?? last.timestamp, ...pin });
    }
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    const reasoning: ReasoningPart[] = [];
    for (const block of blocks) {
      const position = toolCalls.length > 0 ? { afterCalls: toolCalls.length } : {};
      if (block.type === 'text') texts.push((block as { text: string }).text);
      else if (block.type === 'thinking') {
        const { thinking, signature } = block as z.infer<typeof Thinking>;
        // Byte-exact, so the provider verifies its signature; a block without one can be shown, never replayed.
        reasoning.push(
          signature
            ? { type: 'thinking', thinking, signature, ...position }
            : { type: 'reasoning_text', text: thinking, ...position },
        );
      } else if (block.type === 'redacted_thinking') {
        reasoning.push({ type: 'redacted_thinking', data: (block as { data: string }).data, ...position });
      } else if (block.type === 'tool_use') {
        const use = block as z.infer<typeof ToolUse>;
        const call = mapClaudeCall(use.name, use.input, project);
        toolCalls.push({ id: use.id, ...call });
        if (use.name === 'Task' && isRecord(use.input) && typeof use.input['prompt'] === 'string') {
          taskPrompts.set(use.id, use.input['prompt']);
        }
      }
    }
    const usage = usageOf(last.message.usage);
    const seq = builder.assistant({
      at: records[0]?.timestamp ?? last.timestamp,
      content: texts.join('\n\n'),
      toolCalls,
      reasoning,
      ...(usage ? { usage } : {}),
      ...(last.message.stop_reason ? { stopReason: last.message.stop_reason } : {}),
      ...(model ? { model } : {}),
    });
    const at = seq ?? builder.lastSeq;
    for (const record of records) seqOf.set(record.uuid, at);
  };

  file.records.forEach(({ record }, index) => {
    if (file.boundaries.has(index)) flush();
    const sameMessage =
      record.type === 'assistant' &&
      pending !== undefined &&
      record.message.id !== undefined &&
      pending.records[0]?.message.id === record.message.id;
    if (!sameMessage) flush();
    // A branch: this record does not follow the one before it. The conversation goes on from its parent.
    const parent = record.parentUuid ?? undefined;
    // Results only answer calls (a result of an abandoned branch's call finds no open call and is dropped).
    const onlyResults =
      record.type === 'user' &&
      Array.isArray(record.message.content) &&
      record.message.content.length > 0 &&
      record.message.content.every((block) => block.type === 'tool_result');
    if (
      parent !== undefined &&
      previousUuid !== undefined &&
      parent !== previousUuid &&
      !sameMessage &&
      !onlyResults
    ) {
      const toSeq = seqOf.get(parent);
      if (toSeq !== undefined && toSeq !== builder.lastSeq) builder.rewindTo(record.timestamp, toSeq);
    }
    previousUuid = record.uuid;
    if (record.type === 'assistant') {
      pending ??= { records: [], blocks: [] };
      pending.records.push(record);
      pending.blocks.push(...record.message.content);
      return;
    }
    if (record.isMeta) {
      seqOf.set(record.uuid, builder.lastSeq);
      return;
    }
    if (record.isCompactSummary) {
      const tokens = file.boundaries.get(index);
      const summary = userText(record.message.content);
      seqOf.set(
        record.uuid,
        builder.compaction(record.timestamp, summary, tokens !== undefined ? { tokensBefore: tokens } : {}),
      );
      return;
    }
    mapUser(record);
    seqOf.set(record.uuid, builder.lastSeq);
  });
  flush();

  function mapUser(record: UserRecord): void {
    const { content } = record.message;
    const at = record.timestamp;
    if (typeof content === 'string') {
      if (INTERRUPTED.test(content.trim())) builder.interrupted(at, 'interrupted by the user in Claude Code');
      else builder.user(at, content, record.uuid);
      return;
    }
    const texts: string[] = [];
    let interrupted = false;
    for (const block of content) {
      if (block.type === 'tool_result') {
        const result = block as z.infer<typeof ToolResult>;
        const { text, images } = resultContent(result.content);
        const prompt = taskPrompts.get(result.tool_use_id);
        const child = prompt !== undefined ? options.subagent?.(record, prompt) : undefined;
        if (prompt !== undefined && child !== undefined && builder.isOpen(result.tool_use_id)) {
          builder.subagent(at, result.tool_use_id, child, prompt, text);
        } else {
          builder.result({
            at,
            toolCallId: result.tool_use_id,
            content: text,
            ...(result.is_error ? { isError: true } : {}),
            images,
          });
        }
      } else if (block.type === 'text') {
        const text = (block as { text: string }).text;
        if (INTERRUPTED.test(text.trim())) interrupted = true;
        else texts.push(text);
      } else if (block.type === 'image') {
        const data = imageBytes(block as z.infer<typeof Image>);
        const mediaType = (block as z.infer<typeof Image>).source.media_type ?? 'application/octet-stream';
        if (data) builder.userImage(at, data, mediaType, record.uuid);
      }
    }
    builder.user(at, texts.join('\n\n'), record.uuid);
    if (interrupted) builder.interrupted(at, 'interrupted by the user in Claude Code');
  }

  function resultContent(content: z.infer<typeof ToolResult>['content']): {
    text: string;
    images: ToolImage[];
  } {
    if (content === undefined || content === null) return { text: '', images: [] };
    if (typeof content === 'string') return { text: content, images: [] };
    const texts: string[] = [];
    const images: ToolImage[] = [];
    for (const part of content) {
      if (part.type === 'text') texts.push((part as { text: string }).text);
      else if (part.type === 'image') {
        const data = imageBytes(part as z.infer<typeof Image>);
        const image = data ? builder.toolImage(data) : undefined;
        if (image) images.push(image);
        else texts.push('[an image the source kept in a form Keel does not read]');
      }
    }
    return { text: texts.join('\n'), images };
  }

  const title = titleOf(file, seqOf);
  return {
    tool: 'claude-code',
    sourceId: options.sourceId,
    file: options.file,
    project,
    title,
    pin: firstPin,
    startedAt: first.timestamp,
    events: builder.events,
    files: builder.files,
    children: [],
    droppedResults: builder.droppedResults,
  };
}

/** The newest summary record that names a record of this file (others leaked in from other sessions). */
function titleOf(file: ClaudeFile, known: ReadonlyMap<string, number>): string | undefined {
  const own = file.summaries.filter((s) => s.leafUuid === undefined || known.has(s.leafUuid));
  const title = own[own.length - 1]?.summary.trim();
  return title ? title.slice(0, 500) : undefined;
}

function imageBytes(block: z.infer<typeof Image>): Buffer | undefined {
  if (block.source.type !== 'base64' || typeof block.source.data !== 'string') return undefined;
  return Buffer.from(block.source.data, 'base64');
}

function usageOf(usage: AssistantRecord['message']['usage']): Usage | undefined {
  if (!usage || usage.input_tokens === undefined || usage.output_tokens === undefined) return undefined;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    ...(typeof usage.cache_read_input_tokens === 'number'
      ? { cacheReadTokens: usage.cache_read_input_tokens }
      : {}),
    ...(typeof usage.cache_creation_input_tokens === 'number'
      ? { cacheWriteTokens: usage.cache_creation_input_tokens }
      : {}),
  };
}

/** The pin of a Claude model: Anthropic, its window from the catalogue (200k when Keel does not know it). */
export function pinOf(model: string): ModelPin {
  return {
    provider: 'anthropic',
    model,
    contextWindow: findModel(model)?.contextWindow ?? CLAUDE_DEFAULT_WINDOW,
  };
}
