import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { createSubagentRunner } from '../../../../main/core/subagents/childSession.js';
import { runTurn, type TurnHooks, type TurnHost } from '../../../../main/core/turn/engine.js';
import { runningCommand } from '../../../../main/runner/boxedCommand.js';
import { detectSandbox, type SandboxInfo } from '../../../../main/sandbox/box.js';
import { artifactNameFor } from '../../../../main/tools/runCommandTool.js';
import type { ProviderServer, RecordedRequest, ScriptStep } from '../../../support/providerServer.js';
import {
  closeSessionFixture,
  createScriptedSession,
  eventsOf,
  kinds,
  rejected,
  scriptedTurnHost,
  startSessionFixture,
} from '../../../support/sessionFixture.js';
import { ofKind, scriptBoth } from './support.js';

/*
 * What a parent's host learns of its subagent while the child runs: every event the child commits and the
 * live output of the child's commands, each with the child's id, so an app can show the child's commands
 * live and kill them exactly as a top-level session's.
 */

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
// Commands run unasked only in a box: without one, full-auto asks, and these tests would wait for approval.
const sandbox: SandboxInfo = await detectSandbox();
let script: (request: RecordedRequest) => ScriptStep;
const logs: SessionLog[] = [];

beforeEach(async () => {
  script = () => ({ kind: 'reply', text: 'unscripted' });
  ({ dir, home, project, server } = await startSessionFixture('keel-subagent-forwarding-', {
    server: { respond: (request) => script(request) },
  }));
});

afterEach(async () => {
  for (const log of logs.splice(0)) log.close();
  await closeSessionFixture({ dir, server });
});

/** Everything the parent's hooks were told, in arrival order. */
type Heard =
  | { hook: 'event'; event: SessionEvent }
  | { hook: 'output'; toolCallId: string; chunk: string }
  | { hook: 'subagentEvent'; childId: string; event: SessionEvent }
  | { hook: 'subagentOutput'; childId: string; toolCallId: string; chunk: string };

/** A full-auto parent (commands run unasked in the box) whose hooks record what they hear. */
function recordingParent(extraHooks: (heard: Heard[]) => Partial<TurnHooks> = () => ({})) {
  const log = createScriptedSession(
    { home, project, server },
    { policy: 'full-auto', toolMode: 'write', systemPrompt: 'You are Keel.' },
  );
  logs.push(log);
  const heard: Heard[] = [];
  const hooks: TurnHooks = {
    onEvent: (event) => heard.push({ hook: 'event', event }),
    onToolOutput: (toolCallId, chunk) => heard.push({ hook: 'output', toolCallId, chunk }),
    onSubagentEvent: (childId, event) => heard.push({ hook: 'subagentEvent', childId, event }),
    onSubagentToolOutput: (childId, toolCallId, chunk) =>
      heard.push({ hook: 'subagentOutput', childId, toolCallId, chunk }),
    ...extraHooks(heard),
  };
  const host: TurnHost = scriptedTurnHost(
    log,
    { workspace: project, sandbox, registry: { subagents: true } },
    { hooks },
  );
  host.subagents = createSubagentRunner({ home, parent: host });
  return { log, host, heard };
}

const spawnRunner: ScriptStep = {
  kind: 'reply',
  text: 'Delegating.',
  toolCalls: [
    { id: 'spawn1', name: 'spawn_subagent', arguments: { task: 'Run the counter.', tools: ['run_command'] } },
  ],
};

const runInChild = (command: string): ScriptStep => ({
  kind: 'reply',
  text: 'Running it.',
  toolCalls: [{ id: 'cmd1', name: 'run_command', arguments: { command } }],
});

const childIdOf = (log: SessionLog) => {
  const started = ofKind(log.read(), 'subagent_started')[0];
  if (!started) throw new Error('no subagent_started in the parent');
  return started.childId;
};

describe.skipIf(sandbox.kind === 'none')("a parent's host hears its subagent", () => {
  it("gets every child event and the child's live command output, each with the child's id", async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawnRunner : { kind: 'reply', text: 'Counted.' }),
      child: (step) =>
        step === 0
          ? runInChild('for i in 1 2 3; do echo "tick-$i"; sleep 0.1; done')
          : { kind: 'reply', text: 'It printed tick-1 to tick-3.' },
    });
    const { log, host, heard } = recordingParent();
    const outcome = await runTurn(host, { prompt: 'Count to three in a subagent.' });

    expect(outcome).toEqual({ status: 'completed', text: 'Counted.' });
    expect(rejected(server)).toEqual([]);
    const childId = childIdOf(log);
    const childEvents = eventsOf(home, childId);
    expect(kinds(childEvents)).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'tool_call_started',
      'tool_result',
      'assistant_message',
    ]);

    // Every child event, in seq order, exactly as the child's log holds it, and only under the child's id.
    const forwarded = heard.filter((entry) => entry.hook === 'subagentEvent');
    expect(forwarded.map((entry) => entry.childId)).toEqual(childEvents.map(() => childId));
    expect(forwarded.map((entry) => entry.event)).toEqual(childEvents);

    // The command's output, live: under the child's id and the child's call id, before its result.
    const output = heard.filter((entry) => entry.hook === 'subagentOutput');
    expect(output.length).toBeGreaterThan(0);
    expect(new Set(output.map((entry) => `${entry.childId}/${entry.toolCallId}`))).toEqual(
      new Set([`${childId}/cmd1`]),
    );
    expect(output.map((entry) => entry.chunk).join('')).toMatch(/tick-1\r?\n.*tick-2\r?\n.*tick-3/s);
    const firstChunk = heard.findIndex((entry) => entry.hook === 'subagentOutput');
    const childResult = heard.findIndex(
      (entry) => entry.hook === 'subagentEvent' && entry.event.kind === 'tool_result',
    );
    expect(firstChunk).toBeLessThan(childResult);

    // The parent's own hooks carry the parent's events only, and no command output (the parent ran none).
    expect(heard.filter((entry) => entry.hook === 'output')).toEqual([]);
    const own = heard.flatMap((entry) => (entry.hook === 'event' ? [entry.event] : []));
    expect(own).toEqual(log.read().filter((event) => event.seq > 1));
  });

  it("lets the host find the child's running command from what it heard and kill it; both turns go on", async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawnRunner : { kind: 'reply', text: 'The subagent was stopped.' }),
      child: (step) =>
        step === 0
          ? runInChild('echo started; while true; do echo "beat"; sleep 0.1; done')
          : { kind: 'reply', text: 'The command was killed.' },
    });
    // What the app's turn manager does: remember the command's key from the forwarded tool_call_started,
    // then reach the command through the runner's registry by its artifact, in the child's folder.
    const keys = new Map<string, string>();
    let killed = false;
    let seen = '';
    const { log, host } = recordingParent(() => ({
      onSubagentEvent: (childId, event) => {
        if (event.kind === 'tool_call_started')
          keys.set(`${childId}/${event.toolCallId}`, event.idempotencyKey);
      },
      onSubagentToolOutput: (childId, toolCallId, chunk) => {
        // Chunks are cut anywhere (a pty read), so the marker is looked for in what arrived so far.
        seen += chunk;
        if (killed || !seen.includes('beat')) return;
        const key = keys.get(`${childId}/${toolCallId}`);
        if (key === undefined) return;
        const artifacts = path.join(home, 'sessions', childId, 'artifacts');
        const command = runningCommand(path.join(artifacts, artifactNameFor(key)));
        if (!command) return;
        killed = true;
        command.abort();
      },
    }));
    const outcome = await runTurn(host, { prompt: 'Run the endless counter in a subagent.' });

    expect(killed).toBe(true);
    expect(outcome).toEqual({ status: 'completed', text: 'The subagent was stopped.' });
    const childEvents = eventsOf(home, childIdOf(log));
    const result = ofKind(childEvents, 'tool_result')[0];
    expect(result?.toolCallId).toBe('cmd1');
    expect(result?.content).toMatch(/\[stopped by the user/);
    expect(childEvents.at(-1)).toMatchObject({
      kind: 'assistant_message',
      content: 'The command was killed.',
    });
    expect(ofKind(log.read(), 'subagent_result')[0]?.content).toMatch(/The command was killed\./);
  });
});
