import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mapClaudeSession } from '../../../../main/core/imports/claudeCode.js';
import { mapCodexRollout } from '../../../../main/core/imports/codex.js';
import type { LineProblem } from '../../../../main/core/imports/jsonl.js';
import { defaultRoot, findSources } from '../../../../main/core/imports/locations.js';
import type { MappedEvent } from '../../../../main/core/imports/mapped.js';
import {
  CLAUDE_MODEL,
  CODEX_MODEL,
  claudeV02,
  claudeV10,
  claudeV20,
  codexEnveloped,
  codexLegacy,
  PNG,
  signedThinking,
} from '../../../support/historyFixtures.js';

// Issue 35: Claude Code and Codex session files, in several versions of their real shapes, mapped to Keel events.

let dir: string;
let problems: LineProblem[];
const problem = (p: LineProblem) => void problems.push(p);
const childId = (session: string, key: string) => `${session}-${key}`;
const kinds = (events: readonly MappedEvent[]) => events.map((e) => e.kind);
const of = <K extends MappedEvent['kind']>(events: readonly MappedEvent[], kind: K) =>
  events.filter((e): e is Extract<MappedEvent, { kind: K }> => e.kind === kind);

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-history-map-')));
  problems = [];
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('Claude Code files', () => {
  it('0.2: whole messages, a sidechain in the same file as a child session answering its Task, the summary as title', async () => {
    const file = claudeV02(path.join(dir, 's.jsonl'), '/work/p');
    const session = await mapClaudeSession({ file, agentFiles: [] }, childId, problem);
    expect(problems).toEqual([]);
    expect(session?.title).toBe('Counting the files');
    expect(session?.pin).toMatchObject({ provider: 'anthropic', model: CLAUDE_MODEL });
    const events = session?.events ?? [];
    expect(kinds(events)).toEqual([
      'user_message',
      'assistant_message',
      'tool_result',
      'subagent_started',
      'subagent_result',
      'assistant_message',
      'user_message',
    ]);
    expect(events[0]?.at).toBe('2025-06-01T10:01:00.000Z');
    // LS of a folder in the project is list_dir with a project-relative path; the Task is spawn_subagent.
    expect(of(events, 'assistant_message')[0]?.toolCalls).toEqual([
      { id: 'toolu_v02_ls', name: 'list_dir', arguments: '{"path":"src"}' },
      { id: 'toolu_v02_task', name: 'spawn_subagent', arguments: '{"task":"Count the files in src"}' },
    ]);
    const [child] = session?.children ?? [];
    expect(of(events, 'subagent_result')[0]).toMatchObject({
      childId: `${session?.sourceId}-side-${'00000000-0000-4000-8000-000000000010'}`,
      content: 'There are 2 files.',
    });
    expect(kinds(child?.events ?? [])).toEqual(['user_message', 'assistant_message']);
  });

  it('1.0: blocks of one message joined, thinking kept byte-exact with its signature, images, a branch as a rewind, an interruption', async () => {
    const file = claudeV10(path.join(dir, 's.jsonl'), '/work/p');
    const session = await mapClaudeSession({ file, agentFiles: [] }, childId, problem);
    expect(problems).toEqual([]);
    const events = session?.events ?? [];
    expect(kinds(events)).toEqual([
      'user_message',
      'assistant_message',
      'tool_result',
      'assistant_message',
      'user_message',
      'assistant_message',
      'tool_result',
      'interrupted',
      'rewound',
      'user_message',
      'assistant_message',
      'tool_result',
      'assistant_message',
    ]);
    const [first] = of(events, 'assistant_message');
    expect(first?.reasoning).toEqual([
      signedThinking('msg_v10_1', 'The user wants the test fixed. Read it first.'),
    ]);
    expect(first?.toolCalls).toEqual([
      { id: 'toolu_v10_read', name: 'read_file', arguments: '{"path":"test/a.test.ts"}' },
    ]);
    // The prompt's image is an attachment of its message (sent again when the session goes on); the Read
    // result's image is an artifact of the result.
    expect(of(events, 'user_message')[0]?.attachments).toEqual([
      expect.objectContaining({ mimeType: 'image/png', bytes: PNG.length }) as unknown,
    ]);
    expect(of(events, 'tool_result')[0]?.images).toEqual([
      expect.objectContaining({ mimeType: 'image/png', bytes: PNG.length }) as unknown,
    ]);
    expect(session?.files.map((f) => f.area).sort()).toEqual(['artifacts', 'artifacts']);
    // The edited prompt branches from the first answer (placeholder seq 5): the abandoned branch stays, set aside.
    expect(of(events, 'rewound')[0]?.toSeq).toBe(5);
    expect(events[5 - 2]).toMatchObject({
      kind: 'assistant_message',
      content: 'The expectation is wrong: 1 + 1 is 2.',
    });
    expect(of(events, 'assistant_message')[2]?.toolCalls[0]).toEqual({
      id: 'toolu_v10_bash',
      name: 'run_command',
      arguments: '{"command":"npm test"}',
    });
    expect(of(events, 'assistant_message')[3]?.toolCalls[0]?.name).toBe('edit_file');
  });

  it('2.0: a compaction holding its summary, a subagent file linked by agentId, bookkeeping skipped, a malformed line named, a Grep Keel cannot say kept as it was', async () => {
    const { file, agentFile } = claudeV20(dir, '/work/p');
    const session = await mapClaudeSession({ file, agentFiles: [agentFile] }, childId, problem);
    expect(problems).toEqual([{ file, line: 6, message: expect.stringContaining('not JSON') as unknown }]);
    const events = session?.events ?? [];
    expect(kinds(events)).toEqual([
      'user_message',
      'assistant_message',
      'compaction',
      'user_message',
      'assistant_message',
      'subagent_started',
      'subagent_result',
      'assistant_message',
    ]);
    expect(of(events, 'compaction')[0]).toMatchObject({
      through: 3,
      summary: expect.stringContaining('the parser is half refactored') as unknown,
      pinned: 'Refactor the parser',
      tokensBefore: 155000,
    });
    expect(of(events, 'subagent_result')[0]?.childId).toBe(`${session?.sourceId}-agent-a1b2c3d4`);
    expect(session?.children.map((c) => c.sourceId)).toEqual([`${session?.sourceId}/agent-a1b2c3d4`]);
    const last = of(events, 'assistant_message').at(-1);
    expect(last?.toolCalls[0]).toEqual({
      id: 'toolu_v20_grep',
      name: 'Grep',
      arguments: JSON.stringify({ pattern: 'parse\\(', path: '/work/p', output_mode: 'content' }),
    });
  });

  it('a model switched mid-session (/model) is a model_changed; the session is pinned to the first', async () => {
    const file = claudeV02(path.join(dir, 's.jsonl'), '/work/p');
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    const switched = lines.map((line) =>
      line.includes('msg_v02_2') ? line.replace(CLAUDE_MODEL, 'claude-opus-4-1-20250805') : line,
    );
    fs.writeFileSync(file, switched.join('\n') + '\n');
    const session = await mapClaudeSession({ file, agentFiles: [] }, childId, problem);
    expect(session?.pin?.model).toBe(CLAUDE_MODEL);
    const events = session?.events ?? [];
    const change = events.findIndex((e) => e.kind === 'model_changed');
    expect(events[change]).toMatchObject({ provider: 'anthropic', model: 'claude-opus-4-1-20250805' });
    expect(events[change + 1]).toMatchObject({
      kind: 'assistant_message',
      model: 'claude-opus-4-1-20250805',
    });
  });

  it('finds sessions and their subagent files under CLAUDE_CONFIG_DIR', () => {
    const root = defaultRoot('claude-code', { CLAUDE_CONFIG_DIR: path.join(dir, 'cc') }, '/nonexistent');
    expect(root).toBe(path.join(dir, 'cc', 'projects'));
    const folder = path.join(root, '-work-p');
    const { file, agentFile } = claudeV20(folder, '/work/p');
    claudeV10(path.join(folder, 'other.jsonl'), '/work/p');
    const sources = findSources('claude-code', [], root);
    expect(sources.map((s) => s.file).sort()).toEqual([file, path.join(folder, 'other.jsonl')].sort());
    expect(sources.find((s) => s.file === file)?.agentFiles).toEqual([agentFile]);
    expect(defaultRoot('codex', {}, '/home/u')).toBe(path.join('/home/u', '.codex', 'sessions'));
    expect(defaultRoot('codex', { CODEX_HOME: '/x/codex' }, '/home/u')).toBe(
      path.join('/x/codex', 'sessions'),
    );
  });
});

describe('Codex rollouts', () => {
  it('before the envelope: meta line, bare items, state lines; reasoning with encrypted_content kept byte-exact', async () => {
    const file = codexLegacy(path.join(dir, 'rollout-2025-07-01T10-00-00-x.jsonl'));
    const session = await mapCodexRollout(file, problem);
    expect(problems).toEqual([]);
    const events = session?.events ?? [];
    expect(kinds(events)).toEqual(['user_message', 'assistant_message', 'tool_result', 'assistant_message']);
    const [call] = of(events, 'assistant_message');
    expect(call?.toolCalls).toEqual([
      { id: 'call_legacy_1', name: 'run_command', arguments: '{"command":"ls"}' },
    ]);
    expect(call?.reasoning?.[0]).toMatchObject({
      type: 'reasoning',
      summary: ['Listing the files.'],
      encryptedContent: expect.stringMatching(/^enc_/) as unknown,
    });
  });

  it('with the envelope: injected context skipped, image attached, shell and apply_patch mapped, compaction, abort, a malformed line named', async () => {
    const file = codexEnveloped(path.join(dir, 'rollout-2025-09-01T09-00-00-y.jsonl'), '/work/p');
    const session = await mapCodexRollout(file, problem);
    expect(problems).toEqual([{ file, line: 14, message: expect.stringContaining('not JSON') as unknown }]);
    expect(session?.pin).toEqual({
      provider: 'openai',
      model: CODEX_MODEL,
      contextWindow: expect.any(Number) as unknown,
      reasoningEffort: 'medium',
    });
    const events = session?.events ?? [];
    expect(kinds(events)).toEqual([
      'user_message',
      'assistant_message',
      'tool_result',
      'assistant_message',
      'tool_result',
      'assistant_message',
      'compaction',
      'user_message',
      'assistant_message',
      'interrupted',
      'user_message',
      'assistant_message',
    ]);
    expect(of(events, 'user_message')[0]?.attachments).toEqual([
      expect.objectContaining({ mimeType: expect.stringMatching(/^image\//) as unknown }) as unknown,
    ]);
    expect(of(events, 'user_message').map((e) => e.content)).toEqual([
      'rename old to new in a.ts',
      'now run the tests',
      'try the linter instead',
    ]);
    const calls = of(events, 'assistant_message').flatMap((e) => e.toolCalls);
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ['run_command', { command: 'cat a.ts' }],
      ['apply_patch', { input: '*** Begin Patch\n*** Update File: a.ts\n@@\n-old\n+new\n*** End Patch\n' }],
      ['run_command', { command: 'npm test', timeout_ms: 60000 }],
      ['run_command', { command: 'npm run lint' }],
    ]);
    expect(of(events, 'compaction')[0]).toMatchObject({
      summary: expect.stringContaining('rename old to new') as unknown,
      through: 7,
    });
    expect(events.every((e) => e.at.startsWith('2025-09-01T09:'))).toBe(true);
  });
});
