import fs from 'node:fs';
import path from 'node:path';
import type { SessionEvent } from '../../main/common/events.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { SessionIndex } from '../../main/store/sessionIndex.js';

/*
 * Large fixtures for the browser measurements, written into a temp home before `keel serve` starts.
 */

const minutes = (n: number) => n * 60_000;

/**
 * Registers `count` sessions in index.sqlite only (no per-session logs: the list reads nothing
 * else), spread over `folders` project folders of which every other one exists. All in one
 * transaction on the index's own connection, so 10,000 rows take about a second instead of one
 * fsync each; registerSession itself (the real write path) makes every row.
 */
export function registerListFixture(home: string, root: string, count: number, folders = 25): void {
  const index = SessionIndex.open(home);
  const db = (index as unknown as { db: { transaction: (run: () => void) => () => void } }).db;
  const start = Date.now() - minutes(count + 60);
  const folderOf = (i: number) => path.join(root, `project-${String(i % folders).padStart(2, '0')}`);
  for (let f = 0; f < folders; f += 2) fs.mkdirSync(folderOf(f), { recursive: true });
  const statuses = ['idle', 'idle', 'idle', 'interrupted', 'awaiting_approval', 'error'] as const;
  try {
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const at = new Date(start + minutes(i)).toISOString();
        index.registerSession(
          {
            id: `fixture-${String(i).padStart(6, '0')}`,
            title: `Fixture session ${i}: refactor module ${i % 97}`,
            projectFolder: folderOf(i),
            provider: 'openai-compatible',
            model: i % 3 === 0 ? 'qwen2.5-coder:7b' : 'llama3.2:3b',
            createdAt: at,
          },
          {
            lastSeq: 3,
            updatedAt: at,
            status: statuses[i % statuses.length] ?? 'idle',
            messages: [
              { seq: 2, text: `Please refactor module ${i % 97} and keep the tests green (fixture ${i}).` },
            ],
          },
        );
      }
    })();
  } finally {
    index.close();
  }
}

/** A session log being written for `SessionLog.importEvents`: its events so far, and `push` to add one. */
export type ImportedLog = {
  events: SessionEvent[];
  /** Appends `event` with the next seq, a second after the one before; returns its seq. */
  push: (event: Record<string, unknown>) => number;
};

/**
 * Starts a log to import: session_created (the scripted model at `baseUrl`, write tools, policy ask) at
 * `startedAt`, each later event a second after the one before.
 */
export function startImportedLog(options: {
  title: string;
  projectFolder: string;
  baseUrl: string;
  startedAt: number;
}): ImportedLog {
  const events: SessionEvent[] = [];
  const push = (event: Record<string, unknown>) => {
    const seq = events.length + 1;
    events.push({
      ...event,
      seq,
      at: new Date(options.startedAt + seq * 1000).toISOString(),
    } as SessionEvent);
    return seq;
  };
  push({
    kind: 'session_created',
    sessionId: 'placeholder',
    title: options.title,
    projectFolder: options.projectFolder,
    provider: 'openai-compatible',
    model: 'scripted-model',
    baseUrl: options.baseUrl,
    contextWindow: 32000,
    toolMode: 'write',
    policy: 'ask',
  });
  return { events, push };
}

/** Imports one session of exactly `count` events (messages with Markdown and code, tool calls with results); returns its id. */
export function importTranscriptFixture(
  home: string,
  projectFolder: string,
  count: number,
  baseUrl: string,
): string {
  const { events, push } = startImportedLog({
    title: 'Ten thousand events',
    projectFolder,
    baseUrl,
    startedAt: Date.now() - count * 1000,
  });
  for (let turn = 0; events.length < count; turn++) {
    const callId = `call_${turn}`;
    const steps: Record<string, unknown>[] = [
      {
        kind: 'user_message',
        content: `Step ${turn}: look at \`src/module${turn % 50}.ts\` and explain the **parser** loop.`,
      },
      {
        kind: 'assistant_message',
        content: `Reading the module first (turn ${turn}).`,
        toolCalls: [
          { id: callId, name: 'read_file', arguments: JSON.stringify({ path: `src/module${turn % 50}.ts` }) },
        ],
        usage: { inputTokens: 1200 + turn, outputTokens: 40 },
      },
      {
        kind: 'tool_call_started',
        toolCallId: callId,
        tool: 'read_file',
        idempotencyKey: `ev-${turn}-read_file`,
      },
      {
        kind: 'tool_result',
        toolCallId: callId,
        tool: 'read_file',
        content: Array.from(
          { length: 12 },
          (_, line) => `${line + 1}\texport const value${line} = ${line * turn};`,
        ).join('\n'),
        durationMs: 3,
      },
      {
        kind: 'assistant_message',
        content: [
          `The loop in **module ${turn % 50}** walks the tokens once:`,
          '',
          '- it reads a token',
          '- it decides whether to recurse',
          '',
          '```ts',
          `export function parse${turn}(tokens: string[]): number {`,
          '  let depth = 0;',
          "  for (const token of tokens) depth += token === '(' ? 1 : token === ')' ? -1 : 0;",
          '  return depth;',
          '}',
          '```',
        ].join('\n'),
        usage: { inputTokens: 1400 + turn, outputTokens: 120 },
      },
    ];
    for (const step of steps) if (events.length < count) push(step);
  }
  return SessionLog.importEvents(home, events);
}
