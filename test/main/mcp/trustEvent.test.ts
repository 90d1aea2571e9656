import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import { exportSession, importSession } from '../../../main/core/harness/transfer.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { projectPayload } from '../../../main/core/projection/projectPayload.js';
import { openSessionMcp } from '../../../main/core/mcp/sessionServers.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { readProjectMcpConfig } from '../../../main/mcp/config.js';
import { createRedactor } from '../../../main/sandbox/redact.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { appendMcpApproval } from '../../../main/store/mcpApprovals.js';
import { createScriptedSession, useSessionFixture } from '../../support/sessionFixture.js';

// The trust decision a session used for its project's .mcp.json, as an event in its own log: the real
// fixture server in the box, the real turn engine, export and import through the real transfer code.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');

let bwrap = false;
const cleanup: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
const fixture = useSessionFixture('keel-mcp-trust-', {
  cleanup: async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  },
});

const trusted = (events: readonly SessionEvent[]) =>
  events.filter((e): e is EventOf<'mcp_config_trusted'> => e.kind === 'mcp_config_trusted');

/** Writes the project's .mcp.json where the session reads it, and returns its sha256. */
function writeConfig(root: string, tools: string): string {
  const config = { mcpServers: { proj: { command: process.execPath, args: [SERVER, `--tools=${tools}`] } } };
  fs.writeFileSync(path.join(root, '.mcp.json'), JSON.stringify(config));
  const read = readProjectMcpConfig(root);
  if (read.status !== 'valid') throw new Error('expected a valid .mcp.json');
  return read.hash;
}

function approve(home: string, hash: string, via: string): void {
  appendMcpApproval(home, {
    kind: 'mcp_config_approved',
    project: fs.realpathSync(fixture.project),
    configHash: hash,
    servers: ['proj'],
    via,
  });
}

async function turn(log: SessionLog, prompt: string): Promise<void> {
  fixture.server.enqueue({ kind: 'reply', text: 'ok' });
  const host = await createTurnHost(log, { env: { PATH: process.env.PATH } });
  try {
    await runTurn(host, { prompt });
  } finally {
    await host.dispose?.();
  }
}

describe.runIf(process.platform === 'linux')("a project's MCP trust in the session log (bubblewrap)", () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it('records the approved hash it started servers from, once per hash, and never sends it to the provider', async () => {
    const log = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
    cleanup.push(() => log.close());
    const root = fs.realpathSync(fixture.project);
    const first = writeConfig(root, 'echo');

    // Not approved: nothing trusted, nothing recorded as trusted.
    await turn(log, 'one');
    expect(trusted(log.read())).toEqual([]);

    approve(fixture.home, first, 'keel mcp approve');
    await turn(log, 'two');
    await turn(log, 'three');
    expect(trusted(log.read())).toEqual([
      expect.objectContaining({
        project: root,
        configHash: first,
        servers: ['proj'],
        via: 'keel mcp approve',
      }),
    ]);

    // A changed file: the old approval does not cover it; approved again, the new hash is recorded.
    const second = writeConfig(root, 'echo,image');
    await turn(log, 'four');
    expect(trusted(log.read())).toHaveLength(1);
    approve(fixture.home, second, 'app settings');
    await turn(log, 'five');
    expect(trusted(log.read()).map((e) => [e.configHash, e.via])).toEqual([
      [first, 'keel mcp approve'],
      [second, 'app settings'],
    ]);

    // Facts about the session, not messages: the request the provider got says nothing of them.
    const payload = JSON.stringify(projectPayload(log.read(), { system: 'You are Keel.' }));
    expect(payload).not.toContain(first);
    expect(payload).not.toContain(second);
    const sent = JSON.stringify(fixture.server.requests.at(-1)?.body);
    expect(sent).not.toContain(second);
    expect(sent).not.toContain('mcp_config_trusted');

    // Export carries it; an import into another home trusts nothing by it: without an approval there the
    // servers do not start and no trust is recorded, and once approved there it is recorded anew.
    let text = '';
    exportSession(fixture.home, log.id, (chunk) => (text += chunk));
    expect(text).toContain('"kind":"mcp_config_trusted"');
    const otherHome = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-mcp-trust-import-'));
    cleanup.push(() => fs.rmSync(otherHome, { recursive: true, force: true }));
    const { id } = importSession(otherHome, text, { project: root });
    const imported = SessionLog.open(otherHome, id, { write: true });
    cleanup.push(() => imported.close());
    expect(trusted(imported.read()).map((e) => e.configHash)).toEqual([first, second]);
    const open = async () => {
      const session = await openSessionMcp(imported, {
        home: otherHome,
        projectRoot: root,
        projectFolder: root,
        sandbox: await detectSandbox(),
        network: 'none',
        hidden: [otherHome],
        env: { PATH: process.env.PATH },
        redact: (text: string) => createRedactor({ workspaceRoot: root, env: {} }).redact(text),
      });
      const names = session?.tools.map((tool) => tool.name) ?? [];
      await session?.close();
      return names;
    };
    expect(await open()).toEqual([]);
    expect(trusted(imported.read())).toHaveLength(2);
    appendMcpApproval(otherHome, {
      kind: 'mcp_config_approved',
      project: root,
      configHash: second,
      servers: ['proj'],
      via: 'keel mcp approve',
    });
    expect(await open()).toEqual(expect.arrayContaining(['mcp__proj__echo', 'mcp__proj__image']));
    const after = trusted(imported.read());
    expect(after).toHaveLength(3);
    expect(after.at(-1)).toMatchObject({ configHash: second, via: 'keel mcp approve' });
    expect(after.at(-1)?.seq).toBeGreaterThan(after[1]?.seq ?? Infinity);
  });
});
