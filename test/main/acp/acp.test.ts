import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import {
  type AcpSession,
  chunkText,
  startAcp,
  updatesOf,
  writeAcpSettings,
} from '../../support/acpClient.js';
import { runKeel } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { startLoopbackMcpServer } from '../../support/mcpHttpServer.js';
import {
  eventsOf as eventsOfSession,
  newSessionArgs,
  onlySessionId,
  rejected,
} from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-acp-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'a.txt'), 'alpha\nbeta\n');
  },
});

let running: AcpSession[] = [];
afterEach(async () => {
  for (const acp of running) await acp.close();
  running = [];
});
const start = async () => {
  const acp = await startAcp(cli.home);
  running.push(acp);
  return acp;
};

const eventsOf = (id: string): SessionEvent[] => eventsOfSession(cli.home, id);
const count = (events: SessionEvent[], kind: SessionEvent['kind']) =>
  events.filter((event) => event.kind === kind).length;

describe('keel acp: Keel as an Agent Client Protocol agent', () => {
  it('answers initialize with its capabilities and configured providers, and authenticate with one of them', async () => {
    writeAcpSettings(cli.home, cli.server);
    const acp = await start();
    const answer = await acp.connection.agent.request('initialize', { protocolVersion: 1 });
    expect(answer.protocolVersion).toBe(1);
    expect(answer.agentCapabilities?.loadSession).toBe(true);
    expect(answer.agentCapabilities?.sessionCapabilities?.list).toEqual({});
    expect(answer.authMethods?.map((method) => method.id)).toContain('provider:openai-compatible');
    // Picking one is accepted; a provider this home cannot use is refused in words.
    expect(
      await acp.connection.agent.request('authenticate', { methodId: 'provider:openai-compatible' }),
    ).toEqual({});
    await expect(
      acp.connection.agent.request('authenticate', { methodId: 'provider:nowhere' }),
    ).rejects.toThrow(/not a provider Keel can use here/);
  });

  it('streams a prompt: message and thought chunks, tool calls with kind and location, the plan, usage', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue(
      {
        kind: 'reply',
        thinking: 'I should look first.',
        text: 'Reading it. ',
        toolCalls: [
          { name: 'read_file', arguments: { path: 'src/a.txt', offset: 2 } },
          {
            name: 'todo',
            arguments: {
              todos: [
                { content: 'Read a.txt', status: 'completed' },
                { content: 'Explain it', status: 'in_progress' },
              ],
            },
          },
        ],
        usage: { inputTokens: 100, outputTokens: 20 },
      },
      { kind: 'reply', text: 'It holds two words.', usage: { inputTokens: 150, outputTokens: 5 } },
    );
    const acp = await start();
    const { sessionId, modes } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    expect(modes?.currentModeId).toBe('ask');
    const { stopReason } = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'what is in a.txt?' }],
    });
    expect(stopReason).toBe('end_turn');
    expect(chunkText(acp, sessionId, 'agent_message_chunk')).toBe('Reading it. It holds two words.');
    expect(chunkText(acp, sessionId, 'agent_thought_chunk')).toBe('I should look first.');
    // Streamed: the text came as several chunks, not one message at the end.
    expect(updatesOf(acp, sessionId, 'agent_message_chunk').length).toBeGreaterThan(3);
    const read = updatesOf(acp, sessionId).filter(
      (u) => 'toolCallId' in u && 'kind' in u && u.kind === 'read' && 'locations' in u && u.locations,
    );
    expect(read[0]).toMatchObject({
      title: 'Read src/a.txt',
      locations: [{ path: path.join(cli.project, 'src', 'a.txt'), line: 2 }],
    });
    const readId = read[0] && 'toolCallId' in read[0] ? read[0].toolCallId : undefined;
    const statuses = updatesOf(acp, sessionId).flatMap((u) =>
      'status' in u && 'toolCallId' in u && u.toolCallId === readId ? [u.status] : [],
    );
    expect(statuses).toEqual(['pending', 'in_progress', 'completed']);
    expect(updatesOf(acp, sessionId, 'plan')).toEqual([
      {
        sessionUpdate: 'plan',
        entries: [
          { content: 'Read a.txt', priority: 'medium', status: 'completed' },
          { content: 'Explain it', priority: 'medium', status: 'in_progress' },
        ],
      },
    ]);
    expect(updatesOf(acp, sessionId, 'usage_update')).toEqual([
      { sessionUpdate: 'usage_update', used: 120, size: 32_000 },
      { sessionUpdate: 'usage_update', used: 155, size: 32_000 },
    ]);
    expect(rejected(cli.server)).toEqual([]);
    // An ordinary Keel session: in the app's list, on a checkout of the editor's folder.
    const listed = JSON.parse(runKeel(cli.home, ['sessions', '--json']).stdout) as {
      id: string;
      projectFolder: string;
    }[];
    expect(listed).toEqual([expect.objectContaining({ id: sessionId, projectFolder: cli.project })]);
    const { sessions } = await acp.connection.agent.request('session/list', { cwd: cli.project });
    expect(sessions.map((s) => s.sessionId)).toEqual([sessionId]);
    // Modes are Keel's policies: a switch is a policy_changed event, said back as the current mode.
    await acp.connection.agent.request('session/set_mode', { sessionId, modeId: 'full-auto' });
    await acp.waitForUpdate((n) => n.update.sessionUpdate === 'current_mode_update');
    expect(eventsOf(sessionId).filter((event) => event.kind === 'policy_changed')).toEqual([
      expect.objectContaining({ policy: 'full-auto' }),
    ]);
    await expect(
      acp.connection.agent.request('session/set_mode', { sessionId, modeId: 'yolo' }),
    ).rejects.toThrow(/unknown mode/);
  });

  it('asks the editor at an approval gate, records the answer as Keel does, and continues', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'src/a.txt', content: 'gamma\n' } }],
      },
      { kind: 'reply', text: 'Written.' },
      { kind: 'reply', toolCalls: [{ name: 'run_command', arguments: { command: 'echo no > no.txt' } }] },
      { kind: 'reply', text: 'Not run.' },
    );
    const acp = await start();
    const { sessionId } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    acp.answer = (request) => {
      const once = request.options.find((option) => option.kind === 'allow_once');
      return Promise.resolve({ outcome: { outcome: 'selected', optionId: once?.optionId ?? 'none' } });
    };
    const first = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'change a.txt' }],
    });
    expect(first.stopReason).toBe('end_turn');
    const [asked] = acp.permissions;
    expect(asked?.options.map((option) => option.kind)).toEqual([
      'allow_once',
      'allow_always',
      'reject_once',
      'reject_always',
    ]);
    expect(asked?.toolCall).toMatchObject({
      kind: 'edit',
      locations: [{ path: path.join(cli.project, 'src', 'a.txt') }],
      content: [
        {
          type: 'diff',
          path: path.join(cli.project, 'src', 'a.txt'),
          oldText: 'alpha\nbeta\n',
          newText: 'gamma\n',
        },
        {
          type: 'content',
          content: { type: 'text', text: 'Why Keel asks: edits need approval in this policy' },
        },
      ],
    });
    // Auto commit: the granted change reached the editor's folder when the turn stopped.
    expect(fs.readFileSync(path.join(cli.project, 'src', 'a.txt'), 'utf8')).toBe('gamma\n');
    const events = eventsOf(sessionId);
    const granted = events.find((event) => event.kind === 'approval_granted');
    expect(granted).toMatchObject({ scope: 'once' });
    // The finished edit is shown as a diff rebuilt from the file.
    expect(
      updatesOf(acp, sessionId, 'tool_call_update').some(
        (u) =>
          u.sessionUpdate === 'tool_call_update' &&
          (u.content ?? []).some(
            (c) => c.type === 'diff' && c.oldText === 'alpha\nbeta\n' && c.newText === 'gamma\n',
          ),
      ),
    ).toBe(true);

    acp.answer = () => Promise.resolve({ outcome: { outcome: 'selected', optionId: 'reject' } });
    const second = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run it' }],
    });
    expect(second.stopReason).toBe('end_turn');
    expect(acp.permissions[1]?.toolCall.kind).toBe('execute');
    expect(eventsOf(sessionId).filter((event) => event.kind === 'approval_denied')).toEqual([
      expect.objectContaining({ reason: 'rejected in the editor' }),
    ]);
    expect(fs.existsSync(path.join(cli.project, 'no.txt'))).toBe(false);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('reject_always refuses the call and keeps a deny rule: the same call is refused next time without asking', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    const push = {
      kind: 'reply' as const,
      toolCalls: [{ name: 'run_command', arguments: { command: 'git push' } }],
    };
    cli.server.enqueue(push, { kind: 'reply', text: 'Not pushed.' }, push, {
      kind: 'reply',
      text: 'Refused.',
    });
    const acp = await start();
    const { sessionId } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    acp.answer = (request) => {
      const never = request.options.find((option) => option.kind === 'reject_always');
      return Promise.resolve({ outcome: { outcome: 'selected', optionId: never?.optionId ?? 'none' } });
    };
    const first = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'push it' }],
    });
    expect(first.stopReason).toBe('end_turn');
    expect(acp.permissions).toHaveLength(1);
    expect(eventsOf(sessionId).filter((event) => event.kind === 'approval_denied')).toEqual([
      expect.objectContaining({ reason: 'rejected always in the editor' }),
    ]);
    // The rule is Keel's own, for this project, shown (and removable) by keel rules.
    const rules = await keel(cli.home, ['rules', '--project', cli.project]);
    expect(rules.stdout).toContain('Bash(git push)');

    const second = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'push again' }],
    });
    expect(second.stopReason).toBe('end_turn');
    // Refused by the rule before any question: the editor was not asked again.
    expect(acp.permissions).toHaveLength(1);
    expect(count(eventsOf(sessionId), 'approval_request')).toBe(1);
    expect(chunkText(acp, sessionId, 'agent_message_chunk')).toBe('Not pushed.Refused.');
  });

  it("offers the MCP servers' prompts as the editor's commands and expands one sent as /name args", async () => {
    const server = await startLoopbackMcpServer();
    try {
      writeAcpSettings(cli.home, cli.server, 'ask');
      const file = path.join(cli.home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as { defaults: Record<string, unknown> };
      fs.writeFileSync(
        file,
        JSON.stringify({
          ...settings,
          defaults: { ...settings.defaults, networkAllow: [`127.0.0.1:${server.port}`] },
          mcp: { servers: { web: { url: server.url } } },
        }),
      );
      cli.server.enqueue({ kind: 'reply', text: 'Reviewed.' });
      const acp = await start();
      const { sessionId } = await acp.connection.agent.request('session/new', {
        cwd: cli.project,
        mcpServers: [],
      });
      await acp.waitForUpdate((n) => n.update.sessionUpdate === 'available_commands_update');
      const [listed] = updatesOf(acp, sessionId, 'available_commands_update');
      expect(listed?.sessionUpdate === 'available_commands_update' && listed.availableCommands).toEqual([
        {
          name: 'mcp__web__review',
          description: 'Asks for a review of one file. (MCP web)',
          input: { hint: '<file> [focus]' },
        },
      ]);
      const answer = await acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: '/mcp__web__review src/a.txt' }],
      });
      expect(answer.stopReason).toBe('end_turn');
      const messages = eventsOf(sessionId).filter((e) => e.kind === 'user_message');
      expect(messages.map((e) => e.kind === 'user_message' && e.content)).toEqual(['Review src/a.txt.']);
    } finally {
      await server.close();
    }
  });

  it.runIf(process.platform === 'linux')(
    "allow always for an MCP tool in this project keeps Keel's rule: the next session runs it without asking",
    async () => {
      writeAcpSettings(cli.home, cli.server, 'ask');
      const file = path.join(cli.home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      const server = path.resolve('test/fixtures/mcp/server.mjs');
      fs.writeFileSync(
        file,
        JSON.stringify({
          ...settings,
          mcp: { servers: { fixture: { command: process.execPath, args: [server, '--tools=write_note'] } } },
        }),
      );
      const write = {
        kind: 'reply' as const,
        toolCalls: [{ name: 'mcp__fixture__write_note', arguments: { text: 'a' } }],
      };
      cli.server.enqueue(write, { kind: 'reply', text: 'Noted.' }, write, { kind: 'reply', text: 'Again.' });
      const acp = await start();
      acp.answer = (request) => {
        const project = request.options.find((option) => option.optionId === 'allow_tool_in_project');
        return Promise.resolve({ outcome: { outcome: 'selected', optionId: project?.optionId ?? 'none' } });
      };
      const prompt = async (text: string) => {
        const { sessionId } = await acp.connection.agent.request('session/new', {
          cwd: cli.project,
          mcpServers: [],
        });
        const answer = await acp.connection.agent.request('session/prompt', {
          sessionId,
          prompt: [{ type: 'text', text }],
        });
        expect(answer.stopReason).toBe('end_turn');
        return sessionId;
      };
      const first = await prompt('write a note');
      expect(acp.permissions).toHaveLength(1);
      expect(acp.permissions[0]?.options.map((option) => [option.optionId, option.kind])).toEqual([
        ['allow_once', 'allow_once'],
        ['allow_session', 'allow_always'],
        ['allow_tool_in_project', 'allow_always'],
        ['reject', 'reject_once'],
        ['reject_always_in_project', 'reject_always'],
      ]);
      expect(eventsOf(first).find((event) => event.kind === 'approval_granted')).toMatchObject({
        scope: 'tool',
      });
      expect(fs.readFileSync(path.join(cli.home, 'tool-rules.jsonl'), 'utf8')).toContain(
        '"tool":"mcp__fixture__write_note"',
      );
      // Another session of the project: the rule allows the tool, the editor is not asked.
      const second = await prompt('write another');
      expect(acp.permissions).toHaveLength(1);
      expect(count(eventsOf(second), 'approval_request')).toBe(0);
      expect(count(eventsOf(second), 'tool_result')).toBe(1);
    },
  );

  it('leaves a question the editor cancelled pending in the log, and asks it first at the next prompt', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue(
      { kind: 'reply', toolCalls: [{ name: 'write_file', arguments: { path: 'new.txt', content: 'n\n' } }] },
      { kind: 'reply', text: 'Written.' },
      { kind: 'reply', text: 'Next.' },
    );
    const acp = await start();
    const { sessionId } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    // The default answer of the test editor: cancelled.
    const first = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'write new.txt' }],
    });
    expect(first.stopReason).toBe('cancelled');
    let events = eventsOf(sessionId);
    expect(count(events, 'approval_request')).toBe(1);
    expect(count(events, 'approval_granted') + count(events, 'approval_denied')).toBe(0);
    expect(fs.existsSync(path.join(cli.project, 'new.txt'))).toBe(false);

    acp.answer = () => Promise.resolve({ outcome: { outcome: 'selected', optionId: 'allow_session' } });
    const second = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'and then?' }],
    });
    expect(second.stopReason).toBe('end_turn');
    expect(acp.permissions).toHaveLength(2);
    expect(fs.readFileSync(path.join(cli.project, 'new.txt'), 'utf8')).toBe('n\n');
    events = eventsOf(sessionId);
    expect(events.find((event) => event.kind === 'approval_granted')).toMatchObject({ scope: 'session' });
    // The open turn finished first, then the new message had its own turn.
    expect(
      events.filter((e) => e.kind === 'user_message').map((e) => e.kind === 'user_message' && e.content),
    ).toEqual(['write new.txt', 'and then?']);
    expect(chunkText(acp, sessionId, 'agent_message_chunk')).toBe('Written.Next.');
  });

  it('cancels a prompt: Keel records the interruption with the partial text', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue({
      kind: 'reply',
      text: Array.from({ length: 60 }, (_, i) => `word${i} `),
      delayMs: 100,
    });
    const acp = await start();
    const { sessionId } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    const prompt = acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'talk' }],
    });
    await acp.waitForUpdate((n) => n.update.sessionUpdate === 'agent_message_chunk');
    await acp.connection.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    const events = eventsOf(sessionId);
    const interrupted = events.find((event) => event.kind === 'interrupted');
    expect(interrupted?.kind === 'interrupted' && interrupted.content).toMatch(/^word0 /);
    expect(count(events, 'assistant_message')).toBe(0);
  });

  it('loads a session made by keel run: its history replayed once, then continued, and back in the terminal', async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        text: 'Let me look. ',
        toolCalls: [{ name: 'read_file', arguments: { path: 'src/a.txt' } }],
      },
      { kind: 'reply', text: 'Two words.' },
    );
    const run = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'read a.txt' }));
    expect(run.code, run.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    writeAcpSettings(cli.home, cli.server);
    const acp = await start();
    const loaded = await acp.connection.agent.request('session/load', {
      sessionId: id,
      cwd: cli.project,
      mcpServers: [],
    });
    expect(loaded?.modes?.currentModeId).toBe('ask');
    expect(chunkText(acp, id, 'user_message_chunk')).toBe('read a.txt');
    expect(chunkText(acp, id, 'agent_message_chunk')).toBe('Let me look. Two words.');
    expect(updatesOf(acp, id, 'tool_call')).toEqual([
      expect.objectContaining({ kind: 'read', title: 'Read src/a.txt', status: 'pending' }),
    ]);
    expect(updatesOf(acp, id, 'tool_call_update').map((u) => 'status' in u && u.status)).toEqual([
      'in_progress',
      'completed',
    ]);
    cli.server.enqueue({ kind: 'reply', text: 'Still two.' });
    const next = await acp.connection.agent.request('session/prompt', {
      sessionId: id,
      prompt: [{ type: 'text', text: 'and now?' }],
    });
    expect(next.stopReason).toBe('end_turn');
    const body = cli.server.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      expect.arrayContaining(['read a.txt', 'and now?']),
    );

    // And back: the terminal continues the session the editor went on with, the editor's turn in its request.
    cli.server.enqueue({ kind: 'reply', text: 'Back here.' });
    const back = await keel(cli.home, ['run', '--session', id, 'back in the terminal']);
    expect(back.code, back.stderr).toBe(0);
    const last = cli.server.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    expect(last.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(['read a.txt', 'and now?', 'Still two.', 'back in the terminal']),
    );
  });

  it('ends a session the editor closes, and every session it ran when it exits: SessionEnd once each (issue 30)', async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
    const userHome = path.join(cli.dir, 'user-home');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      JSON.stringify({
        hooks: {
          SessionEnd: [{ hooks: [{ type: 'command', command: 'jq -r .reason', timeout: 10 }] }],
        },
      }),
    );
    writeAcpSettings(cli.home, cli.server);
    cli.server.enqueue({ kind: 'reply', text: 'one' }, { kind: 'reply', text: 'two' });
    const acp = await startAcp(cli.home, { KEEL_USER_HOME: userHome });
    running.push(acp);
    const ids: string[] = [];
    for (const text of ['first', 'second']) {
      const { sessionId } = await acp.connection.agent.request('session/new', {
        cwd: cli.project,
        mcpServers: [],
      });
      await acp.connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
      ids.push(sessionId);
    }
    const [closed = '', open = ''] = ids;
    const ends = (id: string) =>
      eventsOf(id).flatMap((e) => (e.kind === 'hook_ran' && e.event === 'SessionEnd' ? [e.output] : []));
    await acp.connection.agent.request('session/close', { sessionId: closed });
    expect(ends(closed)).toEqual(['other\n']);
    expect(ends(open)).toEqual([]);
    await acp.close();
    expect(ends(closed)).toEqual(['other\n']);
    expect(ends(open)).toEqual(['other\n']);
  });

  it('survives a SIGKILL mid-turn: a fresh keel acp loads the session with nothing lost or repeated', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading. ',
        toolCalls: [{ name: 'read_file', arguments: { path: 'src/a.txt' } }],
      },
      { kind: 'reply', text: Array.from({ length: 80 }, (_, i) => `part${i} `), delayMs: 150 },
    );
    const first = await start();
    const { sessionId } = await first.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    void first.connection.agent
      .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read and explain' }] })
      .catch(() => undefined);
    await first.waitForUpdate(
      (n) =>
        n.update.sessionUpdate === 'agent_message_chunk' &&
        n.update.content.type === 'text' &&
        n.update.content.text.startsWith('part'),
    );
    first.child.kill('SIGKILL');
    await first.close();

    const second = await start();
    await second.connection.agent.request('session/load', { sessionId, cwd: cli.project, mcpServers: [] });
    expect(chunkText(second, sessionId, 'user_message_chunk')).toBe('read and explain');
    // What the log holds, once: the first reply and its tool call with its result; the cut stream is not there.
    expect(chunkText(second, sessionId, 'agent_message_chunk')).toBe('Reading. ');
    expect(updatesOf(second, sessionId, 'tool_call')).toHaveLength(1);
    expect(
      updatesOf(second, sessionId, 'tool_call_update').filter(
        (u) => 'status' in u && u.status === 'completed',
      ),
    ).toHaveLength(1);

    cli.server.enqueue({ kind: 'reply', text: 'It says alpha and beta.' });
    const next = await second.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'go on' }],
    });
    expect(next.stopReason).toBe('end_turn');
    const events = eventsOf(sessionId);
    expect(count(events, 'user_message')).toBe(2);
    expect(count(events, 'tool_call_started')).toBe(1);
    expect(count(events, 'tool_result')).toBe(1);
    const body = cli.server.requests.at(-1)?.body as { messages: { role: string }[] };
    expect(body.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(rejected(cli.server)).toEqual([]);
  });
});
