import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import type { McpServerConfig } from '../../../main/common/mcp.js';
import { generateHarness } from '../../../main/core/harness/stream.js';
import type { Harness } from '../../../main/core/harness/types.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { useSessionFixture } from '../../support/sessionFixture.js';
import { writeMcpSettings } from '../../support/turnHost.js';
import { callTool, eventsOf, harnessFor } from '../core/harness/support.js';

// A long-lived host's MCP servers outlive a turn: the real fixture server (the SDK's server API over stdio)
// in the real box, counted by the line each start appends to its HOME, driven by the scripted provider.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const ID = 'kept-mcp';

let harness: Harness | undefined;
let bwrap = false;

beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
const fixture = useSessionFixture('keel-mcp-kept-', {
  cleanup: async () => {
    await harness?.stopMcp();
    harness = undefined;
  },
});

const settingsWith = (server: Partial<McpServerConfig>): void =>
  writeMcpSettings(fixture.home, { fixture: server }, []);
const fixtureServer = (token: string): Partial<McpServerConfig> => ({
  command: process.execPath,
  args: [SERVER],
  env: { FIXTURE_TOKEN: token },
});

/** How many times the session's fixture server started (one line per start in its private HOME). */
const starts = () => {
  try {
    return fs
      .readFileSync(path.join(fixture.home, 'sessions', ID, 'mcp', 'fixture', 'home', 'starts'), 'utf8')
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** Processes of this test's boxes: bwrap's argv names the session's folders, which live in the temp dir. */
const boxProcesses = () =>
  fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fixture.dir);
      } catch {
        return false;
      }
    });

/** This test's fixture servers (a boxed process is this machine's process too). */
const serverProcesses = () =>
  fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // Its environment names this test's folders (its HOME): other files' fixture servers are not counted.
        return (
          fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(SERVER) &&
          fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(fixture.dir)
        );
      } catch {
        return false;
      }
    });

async function turn(name: string, args: Record<string, unknown> = {}) {
  fixture.server.enqueue(callTool(name, args, 'c1'), { kind: 'reply', text: 'done' });
  return generateHarness({ harness: harness!, session: ID, messages: [{ role: 'user', content: 'go' }] });
}
type ToolsBody = { tools?: { function: { name: string } }[] };
const toolsOfRequest = (i: number) =>
  ((fixture.server.requests[i]?.body as ToolsBody).tools ?? []).map((t) => t.function.name);
const listed = () =>
  eventsOf(fixture.home, ID).filter(
    (e: SessionEvent): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed',
  );

describe.runIf(process.platform === 'linux')('MCP servers kept across turns (keepMcpServers)', () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it('starts a server once for two turns, applies tools/list_changed at the next turn, restarts on a config change, stops with the session', async () => {
    settingsWith(fixtureServer('one'));
    harness = harnessFor(fixture.home, fixture.server, {}, { keepMcpServers: true });
    await harness.sessions.getOrCreate({
      id: ID,
      create: { projectFolder: fixture.project, persistentDirs: {} },
    });

    const first = await turn('mcp__fixture__echo', { text: 'hi' });
    expect(first.outcome).toEqual({ status: 'completed', text: 'done' });
    expect(starts()).toBe(1);
    // Between turns the server is alive (its box is a process of this test's folders).
    expect(boxProcesses().length).toBeGreaterThan(0);

    // The second turn uses the same server; the tool it adds (tools/list_changed) is not in this turn's list.
    await turn('mcp__fixture__add_tool');
    expect(starts()).toBe(1);
    expect(toolsOfRequest(3)).not.toContain('mcp__fixture__added');
    expect(listed()).toHaveLength(1);

    // The next turn lists again, offers the new tool, and records which server changed it.
    const third = await turn('mcp__fixture__added');
    expect(third.outcome).toEqual({ status: 'completed', text: 'done' });
    expect(starts()).toBe(1);
    expect(toolsOfRequest(4)).toContain('mcp__fixture__added');
    expect(listed()).toHaveLength(2);
    expect(listed().at(-1)).toMatchObject({ changedBy: ['fixture'] });
    expect(listed().at(-1)?.servers[0]?.tools).toContain('mcp__fixture__added');
    const added = eventsOf(fixture.home, ID).filter(
      (e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === 'c1',
    );
    expect(added.at(-1)?.content).toBe('added ran');

    // A changed configuration restarts the server: the new one sees the new env.
    settingsWith(fixtureServer('two'));
    await turn('mcp__fixture__secret');
    expect(starts()).toBe(2);
    const results = eventsOf(fixture.home, ID).filter(
      (e): e is EventOf<'tool_result'> => e.kind === 'tool_result',
    );
    expect(results.at(-1)?.content).toBe('token is two');

    // Closing the session stops its server: no process of its box is left.
    await harness.stopMcp(ID);
    await expect.poll(boxProcesses, { timeout: 5000 }).toEqual([]);
    // The next turn starts it again.
    await turn('mcp__fixture__echo', { text: 'back' });
    expect(starts()).toBe(3);
  });

  it('restarts a server that died between turns', async () => {
    settingsWith(fixtureServer('one'));
    harness = harnessFor(fixture.home, fixture.server, {}, { keepMcpServers: true });
    await harness.sessions.getOrCreate({
      id: ID,
      create: { projectFolder: fixture.project, persistentDirs: {} },
    });
    await turn('mcp__fixture__echo', { text: 'hi' });
    expect(starts()).toBe(1);
    for (const pid of boxProcesses()) process.kill(Number(pid), 'SIGKILL');
    // Dead before the next turn: no process of the box, nor the server itself, is left.
    await expect.poll(() => [...boxProcesses(), ...serverProcesses()], { timeout: 5000 }).toEqual([]);
    // The next turn waits for the restart (backoff 250 ms), whether or not the connection saw the exit yet,
    // and calls the new server: its tools are not left out of the turn.
    const next = await turn('mcp__fixture__echo', { text: 'again' });
    expect(next.outcome).toEqual({ status: 'completed', text: 'done' });
    expect(starts()).toBe(2);
    const results = eventsOf(fixture.home, ID).filter(
      (e): e is EventOf<'tool_result'> => e.kind === 'tool_result',
    );
    expect(results.at(-1)?.content).toContain('echo: again');
  });

  it('without keepMcpServers starts the server every turn and leaves nothing running', async () => {
    settingsWith(fixtureServer('one'));
    harness = harnessFor(fixture.home, fixture.server, {});
    await harness.sessions.getOrCreate({
      id: ID,
      create: { projectFolder: fixture.project, persistentDirs: {} },
    });
    await turn('mcp__fixture__echo', { text: 'hi' });
    await turn('mcp__fixture__echo', { text: 'hi' });
    expect(starts()).toBe(2);
    await expect.poll(boxProcesses, { timeout: 5000 }).toEqual([]);
  });
});
