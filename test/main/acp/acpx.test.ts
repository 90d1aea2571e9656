import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { writeAcpSettings } from '../../support/acpClient.js';
import { trackChild, waitForClose } from '../../support/childProcesses.js';
import { CLI_BIN } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { eventsOf as eventsOfSession, rejected } from '../../support/sessionFixture.js';

/*
 * Issue 33's "an editor-like client from npm where one runs headless": acpx (a headless ACP client, its own
 * implementation of the client side) drives `keel acp` as an editor would. acpx needs Node >= 22.13: .ci/run
 * installs it beside the MCP conformance runner and sets KEEL_ACPX; Node 22 is KEEL_CONFORMANCE_NODE22. Without
 * them the test is skipped locally, and fails in CI.
 */
const node22 = process.env.KEEL_CONFORMANCE_NODE22;
const acpx = process.env.KEEL_ACPX;
const present = !!node22 && !!acpx && fs.existsSync(node22) && fs.existsSync(acpx);

const cli = useCliFixture('keel-acpx-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'a.txt'), 'alpha\nbeta\n'),
});

type Message = { method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/**
 * One `acpx exec` against `keel acp` in the project; the JSON-RPC messages it printed (`--format json`). acpx exits
 * 5 (its PERMISSION_DENIED) when it denied a permission the agent asked for.
 */
async function acpxExec(
  permissions: '--approve-all' | '--deny-all',
  prompt: string,
  exitCode = 0,
): Promise<Message[]> {
  const agent = `${process.execPath} ${CLI_BIN} --home ${cli.home} acp`;
  const child = trackChild(
    spawn(
      node22 as string,
      [acpx as string, '--agent', agent, permissions, '--format', 'json', 'exec', prompt],
      {
        cwd: cli.project,
        // acpx keeps its own state under HOME: the test's, not the user's.
        env: { ...process.env, HOME: path.join(path.dirname(cli.home), 'acpx-home') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const end = await waitForClose(child);
  expect(end.code, `acpx stderr: ${err.slice(-2000)}`).toBe(exitCode);
  return out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Message);
}

const eventsOf = (id: string): SessionEvent[] => eventsOfSession(cli.home, id);

describe.runIf(present)('keel acp driven by acpx, a headless ACP client from npm', () => {
  it('streams a reply, asks at the approval gate and records the client’s allow and its denial as Keel does', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'gamma\n' } }],
      },
      { kind: 'reply', text: 'Written it.' },
    );
    const first = await acpxExec('--approve-all', 'change a.txt');
    const newSession = first.find((m) => m.result && 'sessionId' in m.result)?.result as {
      sessionId: string;
    };
    const asked = first.find((m) => m.method === 'session/request_permission');
    expect(asked?.params?.toolCall).toMatchObject({ kind: 'edit' });
    const chunks = first
      .filter(
        (m) => (m.params?.update as { sessionUpdate?: string })?.sessionUpdate === 'agent_message_chunk',
      )
      .map((m) => (m.params?.update as { content: { text: string } }).content.text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe('Written it.');
    expect(first.find((m) => m.result && 'stopReason' in m.result)?.result).toEqual({
      stopReason: 'end_turn',
    });
    // The grant is Keel's approval event, and the granted change reached the project when the turn stopped.
    expect(eventsOf(newSession.sessionId).some((e) => e.kind === 'approval_granted')).toBe(true);
    expect(fs.readFileSync(path.join(cli.project, 'a.txt'), 'utf8')).toBe('gamma\n');

    cli.server.enqueue(
      { kind: 'reply', toolCalls: [{ name: 'run_command', arguments: { command: 'echo no > no.txt' } }] },
      { kind: 'reply', text: 'Not run.' },
    );
    const second = await acpxExec('--deny-all', 'run it', 5);
    const other = second.find((m) => m.result && 'sessionId' in m.result)?.result as { sessionId: string };
    expect(second.some((m) => m.method === 'session/request_permission')).toBe(true);
    expect(eventsOf(other.sessionId).filter((e) => e.kind === 'approval_denied')).toHaveLength(1);
    expect(fs.existsSync(path.join(cli.project, 'no.txt'))).toBe(false);
    expect(rejected(cli.server)).toEqual([]);
  }, 90_000);
});

describe.runIf(!present && process.env.CI === 'true')('acpx in CI', () => {
  it('has Node 22 and acpx (.ci/run installs them)', () => {
    expect.fail(
      `KEEL_CONFORMANCE_NODE22 (${node22 ?? 'unset'}) and KEEL_ACPX (${acpx ?? 'unset'}) must name existing files: .ci/run sets them`,
    );
  });
});
