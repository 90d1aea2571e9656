import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../../../main/common/events.js';
import {
  CANCELLED_RESULT,
  CONVERSATION_START_NOTE,
  INSTRUCTIONS_HEADING,
  UnknownCompactionError,
  projectPayload,
  projectView,
  selectView,
  validatePayload,
} from '../../../../main/core/projection/index.js';
import type { Payload } from '../../../../main/core/projection/index.js';
import { LogBuilder, call } from './eventFactory.js';

const system = 'You are a careful coding agent.';

function project(log: LogBuilder, withoutCompaction?: number): Payload {
  const payload = projectPayload(
    log.events,
    withoutCompaction === undefined ? { system } : { system, withoutCompaction },
  );
  expect(validatePayload(payload)).toEqual({ ok: true });
  return payload;
}

function roles(payload: Payload): string {
  return payload.messages.map((message) => message.role).join(',');
}

const cancelled = (toolCallId: string) => ({ role: 'tool', content: CANCELLED_RESULT, toolCallId });

describe('compaction', () => {
  it('turns the summary into a system message after the prompt and leaves out events up to through', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('first answer');
    log.user('second question');
    log.compaction(3, 'goal, answered, second question asked');
    log.assistant('second answer');
    expect(project(log).messages).toEqual([
      { role: 'system', content: system },
      { role: 'system', content: 'Session so far: goal, answered, second question asked' },
      { role: 'user', content: 'goal' },
      { role: 'assistant', content: 'second answer' },
    ]);
  });

  it('uses the compaction with the largest through, not the one appended last', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('a');
    log.assistant('b');
    log.compaction(3, 'wide');
    log.compaction(1, 'narrow');
    const contents = project(log).messages.map((message) => message.content);
    expect(contents).toContain('Session so far: wide');
    expect(contents).not.toContain('Session so far: narrow');
    expect(contents).not.toContain('a');
  });

  it('breaks a tie on through in favour of the later compaction (a re-run)', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.compaction(1, 'first try');
    log.compaction(1, 'second try');
    expect(project(log).messages[1]).toEqual({ role: 'system', content: 'Session so far: second try' });
  });

  it('repeats the first user message verbatim right after the summary', () => {
    const log = new LogBuilder();
    log.user('  keep the API stable\n(staging only)  ');
    log.user('later remark');
    log.compaction(2, 'summary');
    expect(project(log).messages).toEqual([
      { role: 'system', content: system },
      { role: 'system', content: 'Session so far: summary' },
      { role: 'user', content: '  keep the API stable\n(staging only)  ' },
    ]);
  });

  it('does not repeat the first user message when it comes after through', () => {
    const log = new LogBuilder();
    log.add({ kind: 'error', message: 'provider unreachable' });
    log.compaction(1, 'an error happened');
    log.user('goal');
    const payload = project(log);
    expect(payload.messages.filter((message) => message.content === 'goal')).toHaveLength(1);
    expect(roles(payload)).toBe('system,system,user');
  });

  it('rebuilds as if a compaction had not happened, falling back to the previous one', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('a');
    const older = log.compaction(1, 'older');
    log.assistant('b');
    const newer = log.compaction(4, 'newer');
    log.assistant('c');
    const rebuilt = project(log, newer.seq).messages.map((message) => message.content);
    expect(rebuilt).toEqual([system, 'Session so far: older', 'goal', 'a', 'b', 'c']);
    const bare = project(log, older.seq).messages.map((message) => message.content);
    expect(bare).toEqual([system, 'Session so far: newer', 'goal', 'c']);
  });

  it('refuses withoutCompaction naming a seq that is not a compaction', () => {
    const log = new LogBuilder();
    log.user('goal');
    expect(() => selectView(log.events, { withoutCompaction: 1 })).toThrow(UnknownCompactionError);
    expect(() => selectView(log.events, { withoutCompaction: 1 })).toThrow('no compaction at seq 1');
  });
});

describe('tool calls', () => {
  it('closes a call without a result right after the assistant message, before the next user message', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('looking', [call('a'), call('b')]);
    log.result('a', 'found');
    log.user('stop that, do something else');
    expect(project(log).messages.slice(2)).toEqual([
      { role: 'assistant', content: 'looking', toolCalls: [call('a'), call('b')] },
      { role: 'tool', content: 'found', toolCallId: 'a' },
      cancelled('b'),
      { role: 'user', content: 'stop that, do something else' },
    ]);
  });

  it('places a result appended after a later message right after its call', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a')]);
    log.user('a file arrived meanwhile');
    log.result('a', 'late result');
    expect(roles(project(log))).toBe('system,user,assistant,tool,user');
    expect(project(log).messages[3]).toEqual({ role: 'tool', content: 'late result', toolCallId: 'a' });
  });

  it('keeps results in call order, whatever order they arrive in', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a'), call('b')]);
    log.result('b', 'B');
    log.result('a', 'A');
    expect(
      project(log)
        .messages.slice(3)
        .map((message) => message.toolCallId),
    ).toEqual(['a', 'b']);
  });

  it('drops a result whose call the compaction replaced', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a')]);
    log.compaction(2, 'asked for a');
    log.result('a', 'result of a');
    log.user('next');
    const payload = project(log);
    expect(payload.messages.some((message) => message.role === 'tool')).toBe(false);
    expect(roles(payload)).toBe('system,system,user,user');
  });

  it('drops a result for a call that was never made, or made only after the result', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.result('ghost', 'nobody asked');
    log.result('b', 'too early');
    log.assistant('', [call('b')]);
    expect(project(log).messages.slice(1)).toEqual([
      { role: 'user', content: 'goal' },
      { role: 'assistant', content: '', toolCalls: [call('b')] },
      cancelled('b'),
    ]);
  });

  it('answers a call once, with the first result', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a')]);
    log.result('a', 'first');
    log.result('a', 'second');
    const tools = project(log).messages.filter((message) => message.role === 'tool');
    expect(tools).toEqual([{ role: 'tool', content: 'first', toolCallId: 'a' }]);
  });

  it('gives a reused call id a unique id in the payload and answers each occurrence separately', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('call_0')]);
    log.result('call_0', 'one');
    const second = log.assistant('', [call('call_0')]);
    log.result('call_0', 'two');
    const messages = project(log).messages;
    const renamed = `call_0_ev${second.seq}`;
    expect(messages.slice(4)).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ ...call('call_0'), id: renamed }] },
      { role: 'tool', content: 'two', toolCallId: renamed },
    ]);
  });

  it('lets a subagent result answer the spawn_subagent call that started it', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('spawn', 'spawn_subagent')]);
    log.add({
      kind: 'subagent_started',
      childId: 'child',
      toolCallId: 'spawn',
      task: 'search',
      tools: ['grep'],
    });
    log.add({ kind: 'subagent_result', childId: 'child', toolCallId: 'spawn', content: 'found it in x.ts' });
    log.add({ kind: 'subagent_result', childId: 'other', content: 'no call to answer' });
    expect(project(log).messages.slice(3)).toEqual([
      { role: 'tool', content: 'found it in x.ts', toolCallId: 'spawn' },
    ]);
  });
});

describe('interruption', () => {
  it('keeps the partial text with a line saying it was cut off, and cancels its tool calls', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.interrupted('I will now', [call('a')]);
    log.user('no, wait');
    expect(project(log).messages.slice(2)).toEqual([
      { role: 'assistant', content: 'I will now\n[interrupted by the user]', toolCalls: [call('a')] },
      cancelled('a'),
      { role: 'user', content: 'no, wait' },
    ]);
  });

  it('says it was cut off even when nothing was streamed, and names a recorded reason', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.interrupted('');
    log.interrupted('half', [], 'the app quit');
    expect(
      project(log)
        .messages.slice(2)
        .map((message) => message.content),
    ).toEqual(['[interrupted by the user]', 'half\n[interrupted: the app quit]']);
  });
});

describe('events that are not messages', () => {
  it('leaves approvals, tool starts, commits, model/policy changes, errors and session_created out', () => {
    const log = new LogBuilder();
    const facts: NewEvent[] = [
      {
        kind: 'session_created',
        sessionId: 's1',
        projectFolder: '/p',
        provider: 'openai-compatible',
        model: 'm',
        contextWindow: 1000,
        toolMode: 'write',
        policy: 'ask',
      },
      { kind: 'approval_request', toolCallId: 'a', tool: 'edit_file', arguments: '{}' },
      { kind: 'approval_granted', requestSeq: 2, scope: 'once' },
      { kind: 'approval_denied', requestSeq: 2 },
      { kind: 'approval_revoked', grantSeq: 3 },
      { kind: 'tool_call_started', toolCallId: 'a', tool: 'edit_file', idempotencyKey: 'ev2-edit_file' },
      { kind: 'persistent_commit', dir: 'app', files: [] },
      { kind: 'model_changed', provider: 'openai-compatible', model: 'm2', contextWindow: 2000 },
      { kind: 'policy_changed', policy: 'full-auto' },
      { kind: 'error', message: 'rate limited', retryable: true },
      { kind: 'subagent_started', childId: 'c', task: 't', tools: [] },
    ];
    for (const fact of facts) log.add(fact);
    expect(project(log).messages).toEqual([{ role: 'system', content: system }]);
  });

  it('surfaces a staged file as a short user note', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.add({
      kind: 'file_staged',
      path: '/session/uploads/report.pdf',
      size: 1234,
      sha256: 'x',
      mediaType: 'application/pdf',
    });
    log.add({ kind: 'file_staged', path: '/session/uploads/notes', size: 0, sha256: 'y' });
    expect(project(log).messages.slice(2)).toEqual([
      { role: 'user', content: '[file staged: /session/uploads/report.pdf (1234 bytes, application/pdf)]' },
      { role: 'user', content: '[file staged: /session/uploads/notes (0 bytes)]' },
    ]);
  });

  it("tells the model of a background command's end no call's result told it (issue #32), not of one it read", () => {
    const log = new LogBuilder();
    log.user('start the server');
    // Read in stop_command's result: no note.
    log.add({ kind: 'background_exited', handle: 'bg-a', reason: 'stopped', toolCallId: 'stop1' });
    // From before outsideCall: a tool's end, no note; a loss found on resume, a note.
    log.add({ kind: 'background_exited', handle: 'bg-b', reason: 'exited', exitCode: 0 });
    log.add({ kind: 'background_exited', handle: 'bg-c', reason: 'keel_ended' });
    // Recorded by Keel outside any call.
    log.add({
      kind: 'background_exited',
      handle: 'bg-d',
      reason: 'session_stopped',
      command: 'npm run dev',
      outsideCall: true,
    });
    log.add({
      kind: 'background_exited',
      handle: 'bg-e',
      reason: 'exited',
      exitCode: 2,
      command: 'npm test -- --watch',
      outsideCall: true,
    });
    log.user('is it up?');
    expect(project(log).messages.slice(2)).toEqual([
      {
        role: 'user',
        content:
          '[background command bg-c is not running: it ended with the Keel that ran it (Keel quit or crashed); it is never started again by itself]',
      },
      {
        role: 'user',
        content:
          '[background command bg-d (npm run dev) is not running: it was killed when the session was stopped; it is never started again by itself]',
      },
      {
        role: 'user',
        content: '[background command bg-e (npm test -- --watch) is not running: it exited with code 2]',
      },
      { role: 'user', content: 'is it up?' },
    ]);
  });
});

describe('project instructions', () => {
  it('puts the newest instruction files right after the system prompt, before the summary, root first', () => {
    const log = new LogBuilder();
    log.instructions({ 'AGENTS.md': 'old rules' });
    log.user('goal');
    log.assistant('a');
    log.instructions({ 'AGENTS.md': 'Run npm test.', 'pkg/api/AGENTS.md': 'Use tabs.' });
    log.compaction(4, 'goal, answered');
    log.user('next');
    const messages = project(log).messages;
    expect(messages.map((message) => message.role)).toEqual(['system', 'system', 'system', 'user', 'user']);
    expect(messages[0]).toEqual({ role: 'system', content: system });
    const instructions = messages[1]?.content ?? '';
    expect(instructions.startsWith(`${INSTRUCTIONS_HEADING}\n`)).toBe(true);
    expect(instructions).not.toContain('old rules');
    expect(instructions.indexOf('## AGENTS.md\n\nRun npm test.')).toBeGreaterThan(0);
    expect(instructions.indexOf('## pkg/api/AGENTS.md (applies to pkg/api/)\n\nUse tabs.')).toBeGreaterThan(
      instructions.indexOf('Run npm test.'),
    );
    expect(messages[2]?.content).toBe('Session so far: goal, answered');
  });

  it('sends no instructions message once the files were removed (an empty list)', () => {
    const log = new LogBuilder();
    log.instructions({ 'AGENTS.md': 'rules' });
    log.user('goal');
    log.add({ kind: 'instructions_loaded', files: [] });
    expect(project(log).messages).toEqual([
      { role: 'system', content: system },
      { role: 'user', content: 'goal' },
    ]);
  });

  it('ends a file the size cap cut with a note, and names one that did not fit at all', () => {
    const log = new LogBuilder();
    log.add({
      kind: 'instructions_loaded',
      files: [
        { path: 'AGENTS.md', sha256: 'a', size: 50_000, content: 'first part', truncated: true },
        { path: 'web/CLAUDE.md', sha256: 'b', size: 900, content: '', truncated: true },
      ],
    });
    log.user('goal');
    const text = project(log).messages[1]?.content ?? '';
    expect(text).toContain(
      'first part\n[cut here: AGENTS.md is 50000 bytes and the project instructions reached their size cap; read the file for the rest]',
    );
    expect(text).toContain(
      '## web/CLAUDE.md (applies to web/)\n\n[not included: the project instructions reached their size cap; read web/CLAUDE.md for its 900 bytes]',
    );
  });

  it('changes only the instructions message when they change; every later message stays byte for byte', () => {
    const log = new LogBuilder();
    log.instructions({ 'AGENTS.md': 'v1' });
    log.user('goal');
    log.assistant('', [call('a')]);
    log.result('a', 'A');
    const before = project(log).messages;
    log.instructions({ 'AGENTS.md': 'v2' });
    const after = project(log).messages;
    expect(after).toHaveLength(before.length);
    const changed = before.flatMap((message, i) =>
      JSON.stringify(message) === JSON.stringify(after[i]) ? [] : [i],
    );
    expect(changed).toEqual([1]);
    expect(after[1]?.content).toContain('v2');
  });
});

describe('validity for providers', () => {
  it('drops blank user and assistant messages that carry no tool calls', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('   ');
    log.user('');
    log.assistant('', [call('a')]);
    expect(roles(project(log))).toBe('system,user,assistant,tool');
  });

  it('opens with a fixed user note when the conversation would start with the assistant', () => {
    const log = new LogBuilder();
    log.assistant('hello, how can I help?');
    log.user('goal');
    expect(project(log).messages.slice(1, 3)).toEqual([
      { role: 'user', content: CONVERSATION_START_NOTE },
      { role: 'assistant', content: 'hello, how can I help?' },
    ]);
  });

  it('omits an empty system prompt instead of sending a blank system message', () => {
    const log = new LogBuilder();
    log.user('goal');
    expect(projectPayload(log.events, { system: '' }).messages).toEqual([{ role: 'user', content: 'goal' }]);
  });
});

describe('stability', () => {
  it('depends on nothing but the events and the system prompt', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a')]);
    const first = JSON.stringify(projectPayload(log.events, { system }));
    const again = JSON.stringify(projectPayload(structuredClone(log.events), { system }));
    expect(again).toBe(first);
  });

  it('changes only the cancelled closure when the missing result is appended (the documented exception)', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a'), call('b')]);
    log.result('b', 'B');
    log.user('meanwhile');
    const before = project(log).messages;
    log.result('a', 'A');
    const after = project(log).messages;
    expect(after).toHaveLength(before.length);
    const changed = before.flatMap((message, i) =>
      JSON.stringify(message) === JSON.stringify(after[i]) ? [] : [i],
    );
    expect(changed).toEqual([3]);
    expect(before[3]).toEqual(cancelled('a'));
    expect(after[3]).toEqual({ role: 'tool', content: 'A', toolCallId: 'a' });
  });

  it('does not share objects with the events it projects', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('', [call('a')]);
    const payload = project(log);
    payload.messages[2]?.toolCalls?.push(call('b'));
    expect(log.events[1]).toMatchObject({ toolCalls: [call('a')] });
  });

  it('sorts events given out of seq order before selecting', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('answer');
    const reversed = [...log.events].reverse();
    expect(projectView(selectView(reversed), { system })).toEqual(project(log));
  });
});
