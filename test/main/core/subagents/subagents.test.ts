import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Policy, ToolMode } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { createSubagentRunner } from '../../../../main/core/subagents/childSession.js';
import { readSubagentSpec } from '../../../../main/core/subagents/spec.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { detectSandbox, type SandboxInfo } from '../../../../main/sandbox/box.js';
import { SessionIndex } from '../../../../main/store/sessionIndex.js';
import type { ProviderServer, ScriptStep } from '../../../support/providerServer.js';
import {
  closeSessionFixture,
  createScriptedSession,
  rejected,
  scriptedTurnHost,
  startSessionFixture,
} from '../../../support/sessionFixture.js';
import { isChildRequest, ofKind, scriptBoth, toolNamesOf, writeLargeTree, type Body } from './support.js';

const TASK = 'Find every TODO-MARK in src/ and tell me how many there are and where.';
const MARKER = 'TODO-MARK';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let sandbox: SandboxInfo;
let script: (request: Parameters<typeof isChildRequest>[0]) => ScriptStep;
const logs: SessionLog[] = [];

beforeAll(async () => {
  sandbox = await detectSandbox();
});

beforeEach(async () => {
  script = () => ({ kind: 'reply', text: 'unscripted' });
  ({ dir, home, project, server } = await startSessionFixture('keel-subagents-', {
    server: { respond: (request) => script(request) },
  }));
  mkdirSync(path.join(project, 'src'), { recursive: true });
});

afterEach(async () => {
  for (const log of logs.splice(0)) log.close();
  await closeSessionFixture({ dir, server });
});

function createParent(policy: Policy, toolMode: ToolMode = policy === 'read-only' ? 'read-only' : 'write') {
  const log = createScriptedSession(
    { home, project, server },
    { policy, toolMode, systemPrompt: 'You are Keel.' },
  );
  logs.push(log);
  return log;
}

/** A parent host as createTurnHost builds one: the mode's tools plus spawn_subagent, and the runner. */
function parentHost(log: SessionLog, extra: Partial<TurnHost> = {}): TurnHost {
  const host = scriptedTurnHost(log, { workspace: project, sandbox, registry: { subagents: true } }, extra);
  host.subagents = createSubagentRunner({ home, parent: host });
  return host;
}

const spawn = (args: Record<string, unknown>): ScriptStep => ({
  kind: 'reply',
  text: 'Delegating the search.',
  toolCalls: [{ id: 'spawn1', name: 'spawn_subagent', arguments: args }],
});

const parentRequests = () => server.requests.filter((request) => !isChildRequest(request));
const childRequests = () => server.requests.filter((request) => isChildRequest(request));
const childIdOf = (log: SessionLog) => {
  const started = ofKind(log.read(), 'subagent_started')[0];
  if (!started) throw new Error('no subagent_started in the parent');
  return started.childId;
};
const readChild = (id: string) => {
  const child = SessionLog.open(home, id);
  try {
    return child.read();
  } finally {
    child.close();
  }
};

describe('what a subagent is told', () => {
  it('gets the project instructions after its system prompt and the environment block at the end, as its parent does', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['grep'] }) : { kind: 'reply', text: 'None.' },
      child: () => ({ kind: 'reply', text: 'No TODO-MARK anywhere.' }),
    });
    const parent = createParent('auto-edit');
    const files = [{ path: 'AGENTS.md', sha256: 'h', size: 12, content: 'Be thorough.' }];
    const host = parentHost(parent, {
      instructions: () => Promise.resolve(files),
      environment: (state) => Promise.resolve(`<environment>\nPolicy: ${state.policy}\n</environment>`),
    });
    expect(await runTurn(host, { prompt: 'Any TODO-MARKs?' })).toEqual({
      status: 'completed',
      text: 'None.',
    });
    expect(rejected(server)).toEqual([]);
    const [child] = childRequests();
    const messages = (child?.body as Body).messages;
    expect(messages[1]?.role).toBe('system');
    expect(messages[1]?.content).toContain('## AGENTS.md\n\nBe thorough.');
    // The child's own policy (a grep-only child is read-only), not its parent's.
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: '<environment>\nPolicy: read-only\n</environment>',
    });
    expect(ofKind(readChild(childIdOf(parent)), 'instructions_loaded').map((event) => event.files)).toEqual([
      files,
    ]);
  });
});

describe('a subagent keeps the parent window clean', () => {
  it('grows the parent request by the bounded answer while the child log holds thousands of grep lines', async () => {
    writeLargeTree(project, MARKER, { dirs: 6, filesPerDir: 5, linesPerFile: 100 });
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['grep'] }) : { kind: 'reply', text: 'There are 3000.' },
      child: (step) =>
        step === 0
          ? {
              kind: 'reply',
              text: 'Searching each package.',
              toolCalls: Array.from({ length: 6 }, (_, d) => ({
                id: `g${d}`,
                name: 'grep',
                arguments: { pattern: MARKER, path: `src/pkg${d}` },
              })),
            }
          : {
              kind: 'reply',
              text: 'There are 3000 markers: 100 in each of the 30 files src/pkg0..5/file0..4.ts, lines 1-100.',
            },
    });
    const parent = createParent('ask');
    const outcome = await runTurn(parentHost(parent), { prompt: 'How many TODO-MARKs are there?' });

    expect(outcome).toEqual({ status: 'completed', text: 'There are 3000.' });
    expect(rejected(server)).toEqual([]);
    const events = parent.read();
    expect(events.map((e) => e.kind)).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'subagent_started',
      'subagent_result',
      'assistant_message',
    ]);
    const started = ofKind(events, 'subagent_started')[0];
    const result = ofKind(events, 'subagent_result')[0];
    expect(started).toMatchObject({ toolCallId: 'spawn1', task: TASK, tools: ['grep'] });
    expect(result).toMatchObject({ childId: started?.childId, toolCallId: 'spawn1' });
    expect(result?.content).toContain('There are 3000 markers');
    expect(result?.content).toContain(`(child session ${started?.childId}; keel show ${started?.childId})`);
    expect(ofKind(events, 'tool_result')).toEqual([]);

    // The child's log holds the details: its own task, every grep line.
    const child = readChild(started?.childId ?? '');
    const childCreated = child[0];
    expect(childCreated).toMatchObject({
      kind: 'session_created',
      parentId: parent.id,
      projectFolder: project,
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: server.openaiBaseUrl,
      contextWindow: 32_000,
      toolMode: 'read-only',
      policy: 'read-only',
    });
    if (childCreated?.kind === 'session_created')
      expect(readSubagentSpec(childCreated)?.tools).toEqual(['grep']);
    expect(ofKind(child, 'user_message').map((m) => m.content)).toEqual([TASK]);
    const grepOutput = ofKind(child, 'tool_result').map((r) => r.content);
    const grepLines = grepOutput
      .join('\n')
      .split('\n')
      .filter((line) => line.includes(MARKER));
    expect(grepLines).toHaveLength(3000);
    const grepBytes = Buffer.byteLength(grepOutput.join('\n'));

    // The parent's next request grew by the answer, not by the grep output.
    const [first, second] = parentRequests();
    const growth = Buffer.byteLength(second?.raw ?? '') - Buffer.byteLength(first?.raw ?? '');
    expect(grepBytes).toBeGreaterThan(250_000);
    expect(growth).toBeLessThan(1_000 + Buffer.byteLength(result?.content ?? ''));
    expect(second?.raw).not.toContain('needs a look');
    const toolMessage = (second?.body as Body).messages.find((m) => m.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: 'spawn1', content: result?.content });
    // The child saw only its task and its own tools, never the parent's conversation.
    expect(toolNamesOf(childRequests()[0]!)).toEqual(['grep']);
    expect(childRequests()[0]?.raw).not.toContain('How many TODO-MARKs');
    console.info(
      `subagent proof: child grep output ${grepBytes} bytes in ${grepLines.length} lines; ` +
        `parent request ${Buffer.byteLength(first?.raw ?? '')} -> ${Buffer.byteLength(second?.raw ?? '')} bytes (+${growth})`,
    );
  });

  it('bounds a long answer to 4 KiB, marks it truncated and keeps the whole answer in the child', async () => {
    const long = 'é'.repeat(6_000);
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn({ task: TASK }) : { kind: 'reply', text: 'ok' }),
      child: () => ({ kind: 'reply', text: [long] }),
    });
    const parent = createParent('ask');
    await runTurn(parentHost(parent), { prompt: 'go' });
    const result = ofKind(parent.read(), 'subagent_result')[0];
    expect(result?.truncated).toBe(true);
    expect(Buffer.byteLength(result?.content ?? '')).toBeLessThan(4_096 + 300);
    expect(result?.content).toContain('[answer cut at 4096 bytes');
    expect(result?.content).not.toContain('\uFFFD');
    expect(ofKind(readChild(childIdOf(parent)), 'assistant_message')[0]?.content).toBe(long);
  });
});

describe('a subagent gets a subset of the parent tools', () => {
  it('answers spawn_subagent with a tool error where the host has no subagent runner', async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn({ task: TASK }) : { kind: 'reply', text: 'alone then' }),
      child: () => ({ kind: 'reply', text: 'never' }),
    });
    const parent = createParent('ask');
    const host = parentHost(parent);
    delete host.subagents;
    await runTurn(host, { prompt: 'go' });
    expect(ofKind(parent.read(), 'tool_result')[0]?.content).toMatch(/subagents are not available/);
    expect(childRequests()).toEqual([]);
  });

  it('refuses a tool the parent lacks with a tool error, and creates no child', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0
          ? spawn({ task: TASK, tools: ['grep', 'run_command'] })
          : { kind: 'reply', text: 'I cannot.' },
      child: () => ({ kind: 'reply', text: 'should never run' }),
    });
    const parent = createParent('read-only');
    const outcome = await runTurn(parentHost(parent), { prompt: 'search with a command' });
    expect(outcome.status).toBe('completed');
    const events = parent.read();
    const answer = ofKind(events, 'tool_result')[0];
    expect(answer).toMatchObject({ toolCallId: 'spawn1', isError: true });
    expect(answer?.content).toMatch(/you do not have \\"run_command\\"/);
    expect(ofKind(events, 'subagent_started')).toEqual([]);
    expect(childRequests()).toEqual([]);
    expect(readdirSync(path.join(home, 'sessions'))).toEqual([parent.id]);
    expect(rejected(server)).toEqual([]);
  });

  it('refuses spawn_subagent itself: subagents do not nest', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['spawn_subagent'] }) : { kind: 'reply', text: 'ok' },
      child: () => ({ kind: 'reply', text: 'never' }),
    });
    const parent = createParent('ask');
    await runTurn(parentHost(parent), { prompt: 'nest' });
    expect(ofKind(parent.read(), 'tool_result')[0]?.content).toMatch(/cannot spawn subagents/);
    expect(childRequests()).toEqual([]);
  });

  it('gives a read-only parent read-only children, and the child cannot call a tool outside its set', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['grep'] }) : { kind: 'reply', text: 'done' },
      child: (step) =>
        step === 0
          ? { kind: 'reply', toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'x' } }] }
          : { kind: 'reply', text: 'read_file is not mine.' },
    });
    const parent = createParent('read-only');
    await runTurn(parentHost(parent), { prompt: 'go' });
    const child = readChild(childIdOf(parent));
    expect(child[0]).toMatchObject({ toolMode: 'read-only', policy: 'read-only' });
    expect(ofKind(child, 'tool_result')[0]?.content).toMatch(/unknown tool \\"read_file\\"/);
    expect(childRequests().map(toolNamesOf)).toEqual([['grep'], ['grep']]);
    // Without a tools list the child gets the parent's read tools, never its write tools.
    expect(toolNamesOf(parentRequests()[0]!)).toEqual([
      'read_file',
      'list_dir',
      'glob',
      'grep',
      'todo',
      'web_fetch',
      'spawn_subagent',
    ]);
  });
});

describe('a subagent has its own budget', () => {
  const searchForever = (step: number): ScriptStep => ({
    kind: 'reply',
    text: `Still looking (round ${step}).`,
    toolCalls: [{ id: `g${step}`, name: 'grep', arguments: { pattern: 'nothing-here' } }],
    usage: { inputTokens: 3_000, outputTokens: 100 },
  });

  it('stops after maxTurns model requests and returns what it had, marked outOfBudget', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0
          ? spawn({ task: TASK, tools: ['grep'], budget: { maxTurns: 2 } })
          : { kind: 'reply', text: 'partial is fine' },
      child: searchForever,
    });
    const parent = createParent('ask');
    expect((await runTurn(parentHost(parent), { prompt: 'go' })).status).toBe('completed');
    expect(childRequests()).toHaveLength(2);
    const result = ofKind(parent.read(), 'subagent_result')[0];
    expect(result?.outOfBudget).toBe(true);
    expect(result?.content).toMatch(/^\[subagent out of budget: made 2 of 2 model requests/);
    expect(result?.content).toContain('Still looking (round 1).');
  });

  it('stops once its tokens pass maxTokens', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0
          ? spawn({ task: TASK, tools: ['grep'], budget: { maxTokens: 5_000 } })
          : { kind: 'reply', text: 'ok' },
      child: searchForever,
    });
    const parent = createParent('ask');
    await runTurn(parentHost(parent), { prompt: 'go' });
    expect(childRequests()).toHaveLength(2);
    const result = ofKind(parent.read(), 'subagent_result')[0];
    expect(result?.outOfBudget).toBe(true);
    expect(result?.content).toContain('out of budget: used 6200 tokens (maxTokens 5000)');
    const last = readChild(childIdOf(parent)).at(-1);
    expect(last).toMatchObject({
      kind: 'interrupted',
      reason: 'out of budget: used 6200 tokens (maxTokens 5000)',
    });
  });

  it('is stopped after wallTimeMs, keeping its partial text', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, budget: { wallTimeMs: 1_000 } }) : { kind: 'reply', text: 'ok' },
      child: () => ({ kind: 'reply', text: 'slowly thinking about it '.repeat(40), delayMs: 50 }),
    });
    const parent = createParent('ask');
    const started = Date.now();
    await runTurn(parentHost(parent), { prompt: 'go' });
    expect(Date.now() - started).toBeLessThan(4_000);
    const result = ofKind(parent.read(), 'subagent_result')[0];
    expect(result?.outOfBudget).toBe(true);
    expect(result?.content).toContain('out of budget: ran for 1000 ms');
    expect(result?.content).toContain('slowly thinking');
    expect(rejected(server)).toEqual([]);
  });
});

describe('interrupting and resuming', () => {
  it('interrupting the parent interrupts the child; the partial answer is the call result', async () => {
    const controller = new AbortController();
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn({ task: TASK }) : { kind: 'reply', text: 'resumed fine' }),
      child: () => {
        setTimeout(() => controller.abort(), 300);
        return { kind: 'reply', text: 'partial findings so far '.repeat(40), delayMs: 30 };
      },
    });
    const parent = createParent('ask');
    const outcome = await runTurn(parentHost(parent, { signal: controller.signal }), { prompt: 'go' });
    expect(outcome.status).toBe('interrupted');
    const childId = childIdOf(parent);
    expect(readChild(childId).at(-1)).toMatchObject({
      kind: 'interrupted',
      reason: `stopped with its parent session ${parent.id}`,
    });
    expect(
      parent
        .read()
        .map((e) => e.kind)
        .slice(-3),
    ).toEqual(['subagent_started', 'subagent_result', 'interrupted']);
    const result = ofKind(parent.read(), 'subagent_result')[0];
    expect(result?.content).toMatch(/^\[subagent interrupted \(stopped with its parent session/);
    expect(result?.content).toContain('partial findings');

    expect(await runTurn(parentHost(parent))).toEqual({ status: 'completed', text: 'resumed fine' });
    expect(rejected(server)).toEqual([]);
    expect(childRequests()).toHaveLength(1);
  });

  it('resumes a child whose parent stopped between subagent_started and the child being created', async () => {
    script = scriptBoth({
      parent: () => ({ kind: 'reply', text: 'all done' }),
      child: () => ({ kind: 'reply', text: 'child answer after the crash' }),
    });
    const parent = createParent('ask');
    parent.append([
      { kind: 'user_message', content: 'go' },
      {
        kind: 'assistant_message',
        content: '',
        toolCalls: [{ id: 'spawn1', name: 'spawn_subagent', arguments: JSON.stringify({ task: TASK }) }],
      },
      {
        kind: 'subagent_started',
        childId: 'child-after-crash',
        toolCallId: 'spawn1',
        task: TASK,
        tools: ['grep'],
      },
    ]);
    expect(await runTurn(parentHost(parent))).toEqual({ status: 'completed', text: 'all done' });
    const child = readChild('child-after-crash');
    expect(child[0]).toMatchObject({ parentId: parent.id });
    expect(ofKind(parent.read(), 'subagent_result')[0]).toMatchObject({
      childId: 'child-after-crash',
      toolCallId: 'spawn1',
    });
    expect(ofKind(parent.read(), 'subagent_started')).toHaveLength(1);
  });

  it('resumes a child mid-task from its own log: the task is not sent twice and its work is not redone', async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn({ task: TASK }) : { kind: 'reply', text: 'parent done' }),
      child: (step) =>
        step === 0
          ? { kind: 'reply', toolCalls: [{ id: 'g1', name: 'grep', arguments: { pattern: 'x' } }] }
          : { kind: 'reply', text: 'child done' },
    });
    const parent = createParent('ask');
    // The first child request fails for good: the parent records the failure and stays resumable.
    let failures = 0;
    const scripted = script;
    script = (request) => {
      if (
        isChildRequest(request) &&
        (request.body as Body).messages.some((m) => m.role === 'tool') &&
        failures < 4
      ) {
        failures++;
        return { kind: 'fail', status: 500 };
      }
      return scripted(request);
    };
    const first = await runTurn(parentHost(parent), { prompt: 'go' });
    expect(first.status).toBe('failed');
    expect(parent.read().at(-1)).toMatchObject({ kind: 'error', code: 'subagent_failed' });
    const childId = childIdOf(parent);
    expect(ofKind(readChild(childId), 'tool_result')).toHaveLength(1);

    const second = await runTurn(parentHost(parent));
    expect(second).toEqual({ status: 'completed', text: 'parent done' });
    const child = readChild(childId);
    expect(ofKind(child, 'user_message')).toHaveLength(1);
    expect(ofKind(child, 'tool_result')).toHaveLength(1);
    expect(ofKind(parent.read(), 'subagent_result')[0]?.content).toContain('child done');
    expect(rejected(server)).toEqual([]);
  });
});

describe('approvals surface through the parent', () => {
  const writeNotes: ScriptStep = {
    kind: 'reply',
    toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'notes.txt', content: 'found it\n' } }],
  };

  it('stops the parent on the child request, and forwards the grant to the child only', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['grep', 'write_file'] }) : { kind: 'reply', text: 'saved' },
      child: (step) => (step === 0 ? writeNotes : { kind: 'reply', text: 'wrote notes.txt' }),
    });
    const parent = createParent('ask');
    const first = await runTurn(parentHost(parent), { prompt: 'save notes' });
    expect(first.status).toBe('awaiting_approval');
    const mirror = first.status === 'awaiting_approval' ? first.pending[0] : undefined;
    expect(mirror).toMatchObject({ toolCallId: 'spawn1', tool: 'write_file' });
    expect(mirror?.diff).toContain('+found it');
    expect(mirror?.reason).toMatch(/^subagent \S+ asks \(its request \d+\): edits need approval/);
    expect(existsSync(path.join(project, 'notes.txt'))).toBe(false);
    const childId = childIdOf(parent);
    expect(readChild(childId)[0]).toMatchObject({ toolMode: 'write', policy: 'ask' });
    const index = SessionIndex.open(home);
    try {
      const statuses = Object.fromEntries(index.list({ limit: 10 }).map((s) => [s.id, s.status]));
      expect(statuses).toEqual({ [parent.id]: 'awaiting_approval', [childId]: 'awaiting_approval' });
    } finally {
      index.close();
    }

    const grant = parent.append({ kind: 'approval_granted', requestSeq: mirror?.seq ?? 0, scope: 'session' });
    expect(grant.ok).toBe(true);
    const second = await runTurn(parentHost(parent));
    expect(second).toEqual({ status: 'completed', text: 'saved' });
    expect(readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('found it\n');
    const child = readChild(childId);
    expect(ofKind(child, 'approval_granted')).toMatchObject([{ scope: 'session' }]);
    expect(ofKind(child, 'tool_result')).toHaveLength(1);
    const grantSeq = grant.ok ? grant.events[0]?.seq : undefined;
    expect(ofKind(parent.read(), 'approval_revoked')).toMatchObject([{ grantSeq }]);
    expect(ofKind(parent.read(), 'subagent_result')[0]?.content).toContain('wrote notes.txt');
  });

  it('forwards a denial with its reason, and the child goes on without it', async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0 ? spawn({ task: TASK, tools: ['write_file'] }) : { kind: 'reply', text: 'fine' },
      child: (step) => (step === 0 ? writeNotes : { kind: 'reply', text: 'not saved, as asked' }),
    });
    const parent = createParent('ask');
    const first = await runTurn(parentHost(parent), { prompt: 'save notes' });
    const mirror = first.status === 'awaiting_approval' ? first.pending[0] : undefined;
    parent.append({ kind: 'approval_denied', requestSeq: mirror?.seq ?? 0, reason: 'no files today' });
    expect((await runTurn(parentHost(parent))).status).toBe('completed');
    expect(existsSync(path.join(project, 'notes.txt'))).toBe(false);
    const child = readChild(childIdOf(parent));
    expect(ofKind(child, 'tool_result')[0]?.content).toContain('denied by the user: no files today');
    expect(ofKind(parent.read(), 'subagent_result')[0]?.content).toContain('not saved, as asked');
  });
});
