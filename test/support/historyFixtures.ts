import fs from 'node:fs';
import path from 'node:path';
import { reasoningId } from '../../main/core/imports/codex.js';
import { signThinking } from './providerThinking.js';
import { encryptReasoning } from './responsesServer.js';

/*
 * Session files of Claude Code and Codex in the shapes their public descriptions give, several versions of
 * each (issue 35). Claude Code: the early 0.2 records (one record per API message, sidechains in the same
 * file, `costUSD`), 1.0 (one record per content block sharing `message.id`, `requestId`, thinking with its
 * signature, `toolUseResult`, `gitBranch`), 2.0 (compact_boundary + isCompactSummary, subagents in
 * `<session>/subagents/agent-<id>.jsonl` with `agentId`, file-history-snapshot and queue-operation records).
 * Codex: the rollout before the `{timestamp, type, payload}` envelope, and with it. Signatures and encrypted
 * reasoning are made the way the scripted provider server checks them, so a replay is verified.
 */

export const uuid = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

export const CLAUDE_MODEL = 'claude-sonnet-4-5-20250929';
export const CODEX_MODEL = 'gpt-5-codex';

const time = (minute: number): string => new Date(Date.UTC(2025, 5, 1, 10, minute)).toISOString();

export function writeLines(file: string, lines: readonly unknown[]): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n',
  );
  return file;
}

/** Claude Code's folder name for a project: the path with every non-alphanumeric character as '-'. */
export const claudeFolder = (project: string): string => project.replace(/[^A-Za-z0-9]/g, '-');

type Base = { sessionId: string; cwd: string; version?: string };

function record(base: Base, n: number, parent: number | null, extra: Record<string, unknown>) {
  return {
    parentUuid: parent === null ? null : uuid(parent),
    isSidechain: false,
    userType: 'external',
    cwd: base.cwd,
    sessionId: base.sessionId,
    ...(base.version ? { version: base.version } : {}),
    ...extra,
    uuid: uuid(n),
    timestamp: time(n),
  };
}

const user = (base: Base, n: number, parent: number | null, content: unknown, extra = {}) =>
  record(base, n, parent, { type: 'user', message: { role: 'user', content }, ...extra });

const assistant = (
  base: Base,
  n: number,
  parent: number | null,
  id: string,
  content: unknown[],
  extra = {},
) =>
  record(base, n, parent, {
    type: 'assistant',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: CLAUDE_MODEL,
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 34,
        cache_read_input_tokens: 5,
        cache_creation_input_tokens: 0,
      },
    },
    requestId: `req_${id}`,
    ...extra,
  });

/**
 * Claude Code 0.2 (early 2025): one record per API message, no `gitBranch`, a Task's sidechain in the same
 * file, a summary record first.
 */
export function claudeV02(file: string, project: string, sessionId = uuid(9001)): string {
  const base = { sessionId, cwd: project, version: '0.2.93' };
  return writeLines(file, [
    { type: 'summary', summary: 'Counting the files', leafUuid: uuid(6) },
    user(base, 1, null, 'How many files are in src?'),
    assistant(
      base,
      2,
      1,
      'msg_v02_1',
      [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_v02_ls', name: 'LS', input: { path: `${project}/src` } },
        {
          type: 'tool_use',
          id: 'toolu_v02_task',
          name: 'Task',
          input: { description: 'count', prompt: 'Count the files in src' },
        },
      ],
      { costUSD: 0.01, durationMs: 800 },
    ),
    user(base, 3, 2, [
      { tool_use_id: 'toolu_v02_ls', type: 'tool_result', content: '- src/\n  - a.ts\n  - b.ts\n' },
    ]),
    // The Task's sidechain, kept in this file by 0.2.
    { ...user(base, 10, null, 'Count the files in src'), isSidechain: true },
    {
      ...assistant(base, 11, 10, 'msg_v02_side', [{ type: 'text', text: 'There are 2 files.' }]),
      isSidechain: true,
    },
    user(base, 4, 3, [
      {
        tool_use_id: 'toolu_v02_task',
        type: 'tool_result',
        content: [{ type: 'text', text: 'There are 2 files.' }],
      },
    ]),
    assistant(base, 5, 4, 'msg_v02_2', [{ type: 'text', text: 'src has 2 files.' }]),
    user(base, 6, 5, 'thanks'),
  ]);
}

/** The thinking block of response `response` as the scripted server signs it. */
export const signedThinking = (response: string, text: string) => ({
  type: 'thinking',
  thinking: text,
  signature: signThinking(response, 0, 1, text),
});

/**
 * Claude Code 1.0 (mid 2025): each content block its own record sharing `message.id`; signed thinking;
 * `toolUseResult`; an image in a prompt and in a Read result; a branch (the second prompt edited: a new user
 * record whose parent is the first answer); an interruption during a tool call; a meta caveat record.
 */
export function claudeV10(file: string, project: string, sessionId = uuid(9002)): string {
  const base = { sessionId, cwd: project, version: '1.0.51', gitBranch: 'main' };
  const thinking = signedThinking('msg_v10_1', 'The user wants the test fixed. Read it first.');
  return writeLines(file, [
    user(base, 1, null, '<local-command-caveat>Caveat: ignore</local-command-caveat>', { isMeta: true }),
    user(base, 2, 1, [
      { type: 'text', text: 'Fix the failing test; here is the screenshot' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
    ]),
    assistant(base, 3, 2, 'msg_v10_1', [thinking]),
    assistant(base, 4, 3, 'msg_v10_1', [
      {
        type: 'tool_use',
        id: 'toolu_v10_read',
        name: 'Read',
        input: { file_path: `${project}/test/a.test.ts` },
      },
    ]),
    user(
      base,
      5,
      4,
      [
        {
          tool_use_id: 'toolu_v10_read',
          type: 'tool_result',
          content: [
            {
              type: 'text',
              text: "expect(add(1, 1)).toBe(3)\nconst token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';",
            },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
            },
          ],
        },
      ],
      { toolUseResult: { type: 'text', file: { filePath: `${project}/test/a.test.ts` } } },
    ),
    assistant(base, 6, 5, 'msg_v10_2', [{ type: 'text', text: 'The expectation is wrong: 1 + 1 is 2.' }]),
    // The first version of the next prompt ...
    user(base, 7, 6, 'Change it to 2'),
    assistant(base, 8, 7, 'msg_v10_3', [
      {
        type: 'tool_use',
        id: 'toolu_v10_bash',
        name: 'Bash',
        input: { command: 'npm test', description: 'Run the tests' },
      },
    ]),
    user(base, 9, 8, [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_v10_bash',
        content: "The user doesn't want to proceed with this tool use.",
        is_error: true,
      },
      { type: 'text', text: '[Request interrupted by user for tool use]' },
    ]),
    // ... and the prompt edited (a branch from the first answer).
    user(base, 10, 6, 'Change the expectation to 2 and run the tests'),
    assistant(base, 11, 10, 'msg_v10_4', [
      {
        type: 'tool_use',
        id: 'toolu_v10_edit',
        name: 'Edit',
        input: { file_path: `${project}/test/a.test.ts`, old_string: 'toBe(3)', new_string: 'toBe(2)' },
      },
    ]),
    user(base, 12, 11, [
      { type: 'tool_result', tool_use_id: 'toolu_v10_edit', content: 'The file has been updated.' },
    ]),
    assistant(base, 13, 12, 'msg_v10_5', [{ type: 'text', text: 'Fixed.' }]),
  ]);
}

/**
 * Claude Code 2.0 (late 2025): a compaction (compact_boundary, then the summary record), a subagent in its own
 * file linked by `agentId`, bookkeeping records, one malformed line, and a call left without its result.
 */
export function claudeV20(
  dir: string,
  project: string,
  sessionId = uuid(9003),
): { file: string; agentFile: string } {
  const base = { sessionId, cwd: project, version: '2.0.14', gitBranch: 'main' };
  const file = path.join(dir, `${sessionId}.jsonl`);
  const agentId = 'a1b2c3d4';
  const agentFile = path.join(dir, sessionId, 'subagents', `agent-${agentId}.jsonl`);
  writeLines(file, [
    {
      type: 'file-history-snapshot',
      messageId: uuid(1),
      snapshot: { trackedFileBackups: {} },
      isSnapshotUpdate: false,
    },
    user(base, 1, null, 'Refactor the parser'),
    assistant(base, 2, 1, 'msg_v20_1', [{ type: 'text', text: 'Working on it.' }]),
    {
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      uuid: uuid(3),
      parentUuid: null,
      logicalParentUuid: uuid(2),
      timestamp: time(3),
      compactMetadata: { trigger: 'auto', preTokens: 155000 },
      level: 'info',
      isMeta: false,
    },
    user(
      base,
      4,
      3,
      'This session is being continued from a previous conversation. Summary: the parser is half refactored.',
      { isCompactSummary: true, isVisibleInTranscriptOnly: true },
    ),
    '{"type":"user","message":{"role":"user","content": BROKEN',
    user(base, 5, 4, 'Now find the call sites'),
    assistant(base, 6, 5, 'msg_v20_2', [
      {
        type: 'tool_use',
        id: 'toolu_v20_task',
        name: 'Task',
        input: {
          description: 'find',
          prompt: 'Find every call site of parse()',
          subagent_type: 'general-purpose',
        },
      },
    ]),
    { type: 'queue-operation', operation: 'enqueue', timestamp: time(7), sessionId, content: 'also docs' },
    user(
      base,
      7,
      6,
      [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_v20_task',
          content: [{ type: 'text', text: 'parse() is called in a.ts and b.ts' }],
        },
      ],
      {
        toolUseResult: {
          status: 'completed',
          agentId,
          prompt: 'Find every call site of parse()',
          content: [{ type: 'text', text: 'parse() is called in a.ts and b.ts' }],
        },
      },
    ),
    assistant(base, 8, 7, 'msg_v20_3', [
      { type: 'text', text: 'Updating them.' },
      {
        type: 'tool_use',
        id: 'toolu_v20_grep',
        name: 'Grep',
        input: { pattern: 'parse\\(', path: project, output_mode: 'content' },
      },
    ]),
  ]);
  const agentBase = { ...base };
  writeLines(agentFile, [
    { ...user(agentBase, 20, null, 'Find every call site of parse()'), isSidechain: true, agentId },
    {
      ...assistant(agentBase, 21, 20, 'msg_v20_agent', [
        { type: 'text', text: 'parse() is called in a.ts and b.ts' },
      ]),
      isSidechain: true,
      agentId,
    },
  ]);
  return { file, agentFile };
}

const codexTime = (minute: number): string => new Date(Date.UTC(2025, 8, 1, 9, minute)).toISOString();

/** A reasoning item as a rollout keeps it (no id), encrypted the way the scripted server checks it. */
export function codexReasoning(sessionId: string, line: number, summary: string) {
  return {
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: summary }],
    content: null,
    encrypted_content: encryptReasoning(reasoningId(sessionId, line), [summary]),
  };
}

/**
 * A Codex rollout from before the envelope (0.2x, summer 2025): the meta line, bare response items and
 * `record_type: state` lines, every item timed by the session's start.
 */
export function codexLegacy(file: string, sessionId = '11111111-2222-4333-8444-555555555555'): string {
  return writeLines(file, [
    { id: sessionId, timestamp: codexTime(0), instructions: null, git: { branch: 'main' } },
    { record_type: 'state' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
    codexReasoning(sessionId, 4, 'Listing the files.'),
    {
      type: 'function_call',
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-lc', 'ls'] }),
      call_id: 'call_legacy_1',
    },
    {
      type: 'function_call_output',
      call_id: 'call_legacy_1',
      output: JSON.stringify({ output: 'a.ts\nb.ts\n', metadata: { exit_code: 0 } }),
    },
    { record_type: 'state' },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Two files: a.ts and b.ts.' }],
    },
  ]);
}

/**
 * A Codex rollout with the envelope (0.4x, autumn 2025): session_meta, turn_context, injected context, an
 * image, encrypted reasoning, shell and apply_patch (a custom tool) calls, event messages, a compaction, an
 * aborted turn, one malformed line, and a call left without its output.
 */
export function codexEnveloped(
  file: string,
  project: string,
  sessionId = '66666666-7777-4888-8999-000000000000',
): string {
  const line = (minute: number, type: string, payload: unknown) => ({
    timestamp: codexTime(minute),
    type,
    payload,
  });
  const item = (minute: number, payload: unknown) => line(minute, 'response_item', payload);
  const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n-old\n+new\n*** End Patch\n';
  return writeLines(file, [
    line(0, 'session_meta', {
      id: sessionId,
      timestamp: codexTime(0),
      cwd: project,
      originator: 'codex_cli_rs',
      cli_version: '0.46.0',
      instructions: null,
      git: { branch: 'main' },
    }),
    line(0, 'turn_context', {
      cwd: project,
      approval_policy: 'on-request',
      sandbox_policy: { mode: 'workspace-write' },
      model: CODEX_MODEL,
      effort: 'medium',
      summary: 'auto',
    }),
    item(1, {
      type: 'message',
      role: 'user',
      content: [
        {
          type: 'input_text',
          text: `<environment_context>\n  <cwd>${project}</cwd>\n</environment_context>`,
        },
      ],
    }),
    item(1, {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'rename old to new in a.ts' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG.toString('base64')}` },
      ],
    }),
    line(1, 'event_msg', { type: 'user_message', message: 'rename old to new in a.ts', images: [] }),
    item(2, codexReasoning(sessionId, 6, 'Look at the file, then patch it.')),
    item(2, {
      type: 'function_call',
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-lc', 'cat a.ts'], workdir: project }),
      call_id: 'call_env_1',
    }),
    item(3, {
      type: 'function_call_output',
      call_id: 'call_env_1',
      output: 'old\nOPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n',
    }),
    item(4, {
      type: 'custom_tool_call',
      status: 'completed',
      call_id: 'call_env_2',
      name: 'apply_patch',
      input: patch,
    }),
    item(4, {
      type: 'custom_tool_call_output',
      call_id: 'call_env_2',
      output: JSON.stringify({
        output: 'Success. Updated the following files:\nM a.ts\n',
        metadata: { exit_code: 0 },
      }),
    }),
    item(5, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Renamed.' }] }),
    line(5, 'event_msg', { type: 'agent_message', message: 'Renamed.' }),
    line(5, 'event_msg', { type: 'token_count', info: null }),
    '{"timestamp":"2025-09-01T09:06:00.000Z","type":"response_item","payload":{"type":"message", TRUNCATED',
    line(7, 'compacted', { message: 'The user asked to rename old to new in a.ts; done with apply_patch.' }),
    item(8, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'now run the tests' }] }),
    item(8, {
      type: 'function_call',
      name: 'shell',
      arguments: JSON.stringify({ command: ['npm', 'test'], workdir: project, timeout_ms: 60000 }),
      call_id: 'call_env_3',
    }),
    line(9, 'event_msg', { type: 'turn_aborted', reason: 'interrupted' }),
    item(10, {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'try the linter instead' }],
    }),
    item(11, {
      type: 'function_call',
      name: 'shell',
      arguments: JSON.stringify({ command: ['npm', 'run', 'lint'] }),
      call_id: 'call_env_4',
    }),
  ]);
}

/**
 * Codex 0.5x+ threads (multi-agent): a parent rollout that spawns an agent and is compacted with a
 * `replacement_history` (the user's kept message, Codex's injected context, the summary as a message, a remote
 * compaction's encrypted item; `message` empty, as newer versions write it), the subagent's own rollout (its
 * session_meta `source` is `{"subagent": {"thread_spawn": {...}}}`), and a fork of the parent (`forked_from_id`).
 */
export function codexThreads(
  day: string,
  project: string,
): { parent: string; child: string; fork: string; files: string[] } {
  const parent = '0199a000-0000-7000-8000-000000000001';
  const child = '0199a000-0000-7000-8000-000000000002';
  const fork = '0199a000-0000-7000-8000-000000000003';
  const line = (minute: number, type: string, payload: unknown) => ({
    timestamp: codexTime(minute),
    type,
    payload,
  });
  const meta = (id: string, extra: Record<string, unknown> = {}) =>
    line(0, 'session_meta', {
      id,
      timestamp: codexTime(0),
      cwd: project,
      originator: 'codex_cli_rs',
      cli_version: '0.58.0',
      source: 'cli',
      model_provider: 'openai',
      ...extra,
    });
  const context = line(0, 'turn_context', { cwd: project, model: CODEX_MODEL, effort: 'high' });
  const user = (minute: number, text: string) =>
    line(minute, 'response_item', {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text }],
    });
  const answer = (minute: number, text: string) =>
    line(minute, 'response_item', {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text }],
    });
  const files = [
    writeLines(path.join(day, `rollout-2025-09-01T09-00-00-${parent}.jsonl`), [
      meta(parent),
      context,
      user(1, 'map the repository, then fix the flaky test'),
      line(2, 'response_item', {
        type: 'function_call',
        name: 'spawn_agent',
        arguments: JSON.stringify({ message: 'map the repository' }),
        call_id: 'call_spawn_1',
      }),
      line(3, 'response_item', {
        type: 'function_call_output',
        call_id: 'call_spawn_1',
        output: JSON.stringify({ agent_id: child, nickname: 'Scout' }),
      }),
      answer(4, 'Scout is mapping it.'),
      line(5, 'compacted', {
        message: '',
        replacement_history: [
          {
            type: 'message',
            role: 'user',
            content: [
              {
                type: 'input_text',
                text: `<environment_context>\n  <cwd>${project}</cwd>\n</environment_context>`,
              },
            ],
          },
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'map the repository, then fix the flaky test' }],
          },
          {
            type: 'message',
            role: 'assistant',
            content: [
              {
                type: 'output_text',
                text: 'Summary: a subagent maps the repository; the flaky test is next.',
              },
            ],
          },
          { type: 'compaction', encrypted_content: 'gAAAAB-remote-compaction' },
        ],
      }),
      user(6, 'go on with the test'),
      answer(7, 'The flaky test waits on a timer; fixed.'),
    ]),
    writeLines(path.join(day, `rollout-2025-09-01T09-02-00-${child}.jsonl`), [
      meta(child, {
        source: {
          subagent: {
            thread_spawn: {
              parent_thread_id: parent,
              depth: 1,
              agent_nickname: 'Scout',
              agent_role: 'explorer',
            },
          },
        },
        agent_nickname: 'Scout',
        agent_role: 'explorer',
      }),
      context,
      user(2, 'map the repository'),
      answer(3, 'src/ holds the app, test/ the tests.'),
    ]),
    writeLines(path.join(day, `rollout-2025-09-01T09-08-00-${fork}.jsonl`), [
      meta(fork, { forked_from_id: parent }),
      context,
      user(1, 'map the repository, then fix the flaky test'),
      answer(4, 'Scout is mapping it.'),
      user(8, 'try another approach to the flaky test'),
    ]),
  ];
  return { parent, child, fork, files };
}
