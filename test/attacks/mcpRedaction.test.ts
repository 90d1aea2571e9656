import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { exportSession } from '../../main/core/harness/transfer.js';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../support/sessionFixture.js';

// Issue #38: an MCP server's words reach the provider and the log. A hostile server (it reads the project's
// .env in its box, where the project is visible read-only) put the values into its tool descriptions, titles
// and input schemas, which went to the provider as they were; one that crashed printed them on stderr, kept
// in the session's mcp_tools_listed event and so in exports. Both go through the session's redactor now.
// Real bubblewrap, a real server process, real HTTP to the scripted provider.
const LEAKY = path.resolve('test/fixtures/mcp/leakyServer.mjs');
// Ordinary-looking values no format detector knows: only the .env file says they are secrets.
const TOKEN = 'tok9f8e7d6c5b4a39281706qq';
const PASSWORD = 'Zq8wLp2vRt6Yx4mN';

let bwrap = false;
const logs: SessionLog[] = [];
beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
const fixture = useSessionFixture('keel-attack-mcp-redact-', {
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

/** One turn (the model answers "ok") with the leaky server configured; its log, notices and export. */
async function turnWith(args: string[]): Promise<{ log: SessionLog; notices: string[]; exported: string }> {
  fs.writeFileSync(path.join(fixture.project, '.env'), `SERVICE_TOKEN=${TOKEN}\nDB_PASSWORD=${PASSWORD}\n`);
  fs.mkdirSync(fixture.home, { recursive: true });
  fs.writeFileSync(
    path.join(fixture.home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { leaky: { command: process.execPath, args: [LEAKY, ...args] } } } }),
  );
  const log = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
  logs.push(log);
  fixture.server.enqueue({ kind: 'reply', text: 'ok' });
  const notices: string[] = [];
  const host = await createTurnHost(log, {
    env: { PATH: process.env.PATH },
    hooks: { onNotice: (text) => notices.push(text) },
  });
  try {
    await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
  let exported = '';
  exportSession(fixture.home, log.id, (chunk) => (exported += chunk));
  return { log, notices, exported };
}

function expectNoSecret(text: string): void {
  expect(text).not.toContain(TOKEN);
  expect(text).not.toContain(PASSWORD);
}

describe.runIf(process.platform === 'linux')("an MCP server's words pass the session's redactor", () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it('tool descriptions, titles and input schemas reach the provider redacted', async () => {
    const { log, notices, exported } = await turnWith([]);
    const bodies = fixture.server.requests.map((request) => request.raw);
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) expectNoSecret(body);
    // The tools are offered, their words redacted, not dropped.
    const body = bodies.join('\n');
    expect(body).toContain('mcp__leaky__lookup');
    expect(body).toContain('mcp__leaky__titled');
    expect(body).toContain('Configured with token [REDACTED:SERVICE_TOKEN] and [REDACTED:DB_PASSWORD]');
    expect(body).toContain('Titled by [REDACTED:SERVICE_TOKEN]');
    expect(body).toContain('use [REDACTED:SERVICE_TOKEN] as the query');
    // The tool named by the secret is left out, and the log says so without the name.
    const listed = log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');
    expect(listed.at(-1)?.skipped).toEqual([
      'leaky/[REDACTED:SERVICE_TOKEN]: its name holds what looks like a secret',
    ]);
    expect(listed.at(-1)?.servers[0]?.tools).toEqual(['mcp__leaky__lookup', 'mcp__leaky__titled']);
    expectNoSecret(JSON.stringify(log.read()));
    expectNoSecret(notices.join('\n'));
    expectNoSecret(exported);
  });

  it("a crashing server's stderr is redacted in the log, its export and the notices", async () => {
    const { log, notices, exported } = await turnWith(['--crash']);
    const listed = log.read().filter((e): e is EventOf<'mcp_tools_listed'> => e.kind === 'mcp_tools_listed');
    const report = listed.at(-1)?.servers.find((server) => server.name === 'leaky');
    expect(report).toMatchObject({ state: 'failed' });
    expect(report?.stderrTail).toContain('fatal: cannot start');
    expect(report?.stderrTail).toContain('SERVICE_TOKEN=[REDACTED:SERVICE_TOKEN]');
    expectNoSecret(JSON.stringify(log.read()));
    expectNoSecret(exported);
    expectNoSecret(notices.join('\n'));
    for (const request of fixture.server.requests) expectNoSecret(request.raw);
  });
});
