import Database from 'better-sqlite3';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { SessionEvent } from '../../../main/common/events.js';
import type { ConversationStep } from '../conversation.js';

/** The LangChain message a conversation step adds to the graph's `messages` channel. */
export function messageOfStep(step: ConversationStep): BaseMessage {
  switch (step.kind) {
    case 'user':
      return new HumanMessage(step.content);
    case 'agent':
      return new AIMessage({
        content: step.content,
        tool_calls: [
          {
            id: step.toolCall.id,
            name: step.toolCall.name,
            args: JSON.parse(step.toolCall.arguments) as Record<string, unknown>,
            type: 'tool_call',
          },
        ],
        usage_metadata: { input_tokens: 1200, output_tokens: 80, total_tokens: 1280 },
      });
    case 'tool':
      return new ToolMessage({ content: step.content, tool_call_id: step.toolCallId, name: step.tool });
  }
}

/**
 * The LangChain messages a LangGraph app would hold for a Keel event list (fixtures): messages map
 * one to one, tool_call_started has no message, and a compaction becomes the summary message that
 * replaces everything before it (what an app does with RemoveMessage), keeping the first user message.
 */
export function messagesOfEvents(events: readonly SessionEvent[]): BaseMessage[] {
  let messages: BaseMessage[] = [];
  let firstUser: BaseMessage | undefined;
  for (const event of events) {
    switch (event.kind) {
      case 'user_message': {
        const message = new HumanMessage(event.content);
        firstUser ??= message;
        messages.push(message);
        break;
      }
      case 'assistant_message':
        messages.push(
          new AIMessage({
            content: event.content,
            tool_calls: event.toolCalls.map((call) => ({
              id: call.id,
              name: call.name,
              args: JSON.parse(call.arguments) as Record<string, unknown>,
              type: 'tool_call' as const,
            })),
          }),
        );
        break;
      case 'tool_result':
        messages.push(
          new ToolMessage({
            content: event.content,
            tool_call_id: event.toolCallId,
            name: event.tool ?? 'tool',
          }),
        );
        break;
      case 'compaction':
        messages = [new SystemMessage(`Session so far: ${event.summary}`), ...(firstUser ? [firstUser] : [])];
        break;
      default:
        break;
    }
  }
  return messages;
}

/** The node a ReAct-style graph runs after a step: the agent answers users and tool results. */
function nextNode(step: ConversationStep): 'agent' | 'tools' {
  return step.kind === 'agent' ? 'tools' : 'agent';
}

/**
 * One conversation persisted as LangGraph graph state: after every superstep the whole state (the
 * `messages` channel holding every message so far, plus the trigger channel) is written with
 * `SqliteSaver.put`, shaped as LangGraph's loop builds it (`createCheckpoint`: v4 checkpoint with
 * channel_values, channel_versions, versions_seen; metadata {source, step, parents}; newVersions).
 * The real loop also calls `putWrites` for each task's writes; that is left out, so LangGraph's
 * numbers here are a lower bound.
 */
export class LangGraphThread {
  readonly saver: SqliteSaver;
  private readonly db: Database.Database;
  private readonly messages: BaseMessage[] = [];
  private checkpoint: Checkpoint = emptyCheckpoint();
  private previousVersions: ChannelVersions = {};
  private parentId: string | undefined;
  private step = -1;

  /**
   * Opens the saver on `path`. `synchronous` is set on the connection (better-sqlite3's WAL
   * default is NORMAL); FULL gives the same durability as Keel's default.
   */
  constructor(
    path: string,
    readonly threadId: string,
    synchronous: 'FULL' | 'NORMAL' = 'FULL',
  ) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous}`);
    this.saver = new SqliteSaver(this.db);
  }

  /** Adds the steps' messages to the state and writes one checkpoint, as one superstep would. */
  async putStep(steps: readonly ConversationStep[]): Promise<void> {
    const last = steps[steps.length - 1];
    if (last === undefined) return;
    await this.putMessages(steps.map(messageOfStep), nextNode(last));
  }

  /** Appends messages to the state and writes one checkpoint that triggers `next`. */
  async putMessages(added: readonly BaseMessage[], next: 'agent' | 'tools' = 'agent'): Promise<void> {
    this.messages.push(...added);
    this.step += 1;
    const versions = { ...this.checkpoint.channel_versions };
    const bump = (channel: string): void => {
      versions[channel] = this.saver.getNextVersion(versions[channel] as number | undefined);
    };
    bump('messages');
    const trigger = `branch:to:${next}`;
    bump(trigger);
    const seen = { ...this.checkpoint.versions_seen };
    const ran = next === 'agent' ? 'tools' : 'agent';
    seen[this.step === 0 ? '__input__' : ran] = { [`branch:to:${ran}`]: versions[`branch:to:${ran}`] ?? 0 };
    this.checkpoint = {
      v: 4,
      id: uuid6(this.step),
      ts: new Date().toISOString(),
      channel_values: { messages: [...this.messages], [trigger]: null },
      channel_versions: versions,
      versions_seen: seen,
    };
    const newVersions: ChannelVersions = {};
    for (const [channel, version] of Object.entries(versions)) {
      if (this.previousVersions[channel] !== version) newVersions[channel] = version;
    }
    this.previousVersions = versions;
    const metadata: CheckpointMetadata = {
      source: this.step === 0 ? 'input' : 'loop',
      step: this.step,
      parents: {},
    };
    const config = {
      configurable: { thread_id: this.threadId, checkpoint_ns: '', checkpoint_id: this.parentId },
    };
    // LangGraph's loop passes newVersions; SqliteSaver's own signature omits it, the base class has it.
    const saver: BaseCheckpointSaver = this.saver;
    await saver.put(config, this.checkpoint, metadata, newVersions);
    this.parentId = this.checkpoint.id;
  }

  /** Loads the newest checkpoint of the thread and returns its messages (what a resume reads). */
  async loadMessages(): Promise<BaseMessage[]> {
    const tuple = await this.saver.getTuple({ configurable: { thread_id: this.threadId } });
    const messages = tuple?.checkpoint.channel_values.messages;
    if (!Array.isArray(messages)) throw new Error(`thread ${this.threadId} has no messages checkpoint`);
    return messages as BaseMessage[];
  }

  /** Serialized size of the newest checkpoint blob (what the saver stored for the last step). */
  lastCheckpointBytes(): number {
    const row = this.db
      .prepare(
        'SELECT length(checkpoint) + length(metadata) AS n FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1',
      )
      .get(this.threadId) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  /** Closes the database. */
  close(): void {
    this.db.close();
  }
}

/** Opens a saver on an existing file to read a thread, as a fresh process resuming would. */
export function openLangGraphReader(
  path: string,
  threadId: string,
): { load: () => Promise<BaseMessage[]>; close: () => void } {
  const db = new Database(path);
  const saver = new SqliteSaver(db);
  return {
    load: async () => {
      const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
      const messages = tuple?.checkpoint.channel_values.messages;
      if (!Array.isArray(messages)) throw new Error(`thread ${threadId} has no messages checkpoint`);
      return messages as BaseMessage[];
    },
    close: () => db.close(),
  };
}
