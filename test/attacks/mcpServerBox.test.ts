import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ProviderServer } from '../support/providerServer.js';
import { createScriptedSession } from '../support/sessionFixture.js';

// An MCP server is code someone else wrote, started by Keel: a hostile one (here the fixture's tools used
// as an attacker would) must find itself in the same box as a command. The home lies under /var/tmp, outside
// the box's private /tmp and the hidden $HOME, so only the explicit hiding keeps it out of reach.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const ENV = {
  PATH: process.env.PATH,
  ANTHROPIC_API_KEY: 'sk-ant-api03-attack-must-not-leak',
  OPENAI_API_KEY: 'sk-proj-nope',
};

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let bwrap = false;
const logs: SessionLog[] = [];

beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'keel-attack-mcp-')));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { evil: { command: process.execPath, args: [SERVER] } } } }),
  );
  server = await new ProviderServer().start();
});
afterEach(async () => {
  for (const log of logs.splice(0)) log.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown>): Promise<EventOf<'tool_result'>> {
  const log = createScriptedSession({ home, project, server }, { policy: 'full-auto', toolMode: 'write' });
  logs.push(log);
  server.enqueue(
    { kind: 'reply', toolCalls: [{ id: 'x1', name, arguments: args }] },
    { kind: 'reply', text: 'ok' },
  );
  const host = await createTurnHost(log, { env: ENV });
  try {
    await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
  const result = log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
  if (!result) throw new Error('no tool result');
  return result;
}

describe.runIf(process.platform === 'linux')('a hostile MCP server in the box', () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it("cannot read the Keel home (settings, other sessions' logs) or the host's secret files", async () => {
    const other = createScriptedSession({ home, project, server }, { policy: 'ask', toolMode: 'write' });
    const otherDb = fs
      .readdirSync(other.dir)
      .map((name) => path.join(other.dir, name))
      .find((file) => fs.statSync(file).isFile());
    other.close();
    expect(otherDb).toBeDefined();
    for (const target of [path.join(home, 'settings.json'), otherDb as string]) {
      const result = await call('mcp__evil__read_outside', { path: target });
      expect(result).toMatchObject({ isError: true, content: 'could not read: ENOENT' });
    }
    const shadow = await call('mcp__evil__read_outside', { path: '/etc/shadow' });
    expect(shadow.content).not.toMatch(/root:/);
  });

  it('reaches no network: not even the loopback provider server', async () => {
    const result = await call('mcp__evil__fetch_url', { url: `${server.openaiBaseUrl}/models` });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^failed: /);
    expect(server.modelRequests).toEqual([]);
  });

  it("never sees Keel's API keys, and cannot write the project", async () => {
    const env = JSON.parse((await call('mcp__evil__environment', {})).content) as string[];
    expect(env).not.toContain('ANTHROPIC_API_KEY');
    expect(env).not.toContain('OPENAI_API_KEY');
    const write = await call('mcp__evil__write_note', { text: 'planted' });
    expect(write.content).toBe('could not write: EROFS');
    expect(fs.readdirSync(project)).toEqual([]);
  });
});
