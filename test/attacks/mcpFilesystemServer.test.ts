import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ProviderServer } from '../support/providerServer.js';
import { createScriptedSession } from '../support/sessionFixture.js';

// A real MCP server no one here wrote (@modelcontextprotocol/server-filesystem), told it may use the whole
// disk ("/"), so only Keel's box stands between it and what lies around the project: a sibling of the project
// and the Keel home are refused by the box (they are not there), not by the server. Everything lies under
// /var/tmp, which a command's box shows read-only (see keelHome.test.ts): the outside.txt read passed before
// the MCP box hid the project's parent folder.
const require = createRequire(import.meta.url);
const FILESYSTEM_SERVER = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist',
  'index.js',
);

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
  dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'keel-attack-mcpfs-')));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, 'README.md'), 'the project readme\n');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(path.join(dir, 'outside.txt'), 'outside the project\n');
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({
      mcp: { servers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, '/'] } } },
    }),
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
    { kind: 'reply', toolCalls: [{ id: 'f1', name, arguments: args }] },
    { kind: 'reply', text: 'ok' },
  );
  const host = await createTurnHost(log, { env: { PATH: process.env.PATH } });
  try {
    await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
  const result = log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
  if (!result) throw new Error('no tool result');
  return result;
}

describe.runIf(process.platform === 'linux')('@modelcontextprotocol/server-filesystem in the box', () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it('reads the project through Keel, its tools annotated read-only as reads', async () => {
    const result = await call('mcp__fs__read_text_file', { path: path.join(project, 'README.md') });
    expect(result.isError).toBeUndefined();
    expect(result.content.startsWith('the project readme\n')).toBe(true);
  });

  it('cannot read outside the project even though the server allows "/": the box refuses', async () => {
    for (const target of [path.join(dir, 'outside.txt'), path.join(home, 'settings.json')]) {
      const result = await call('mcp__fs__read_text_file', { path: target });
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/ENOENT|no such file/i);
      expect(result.content).not.toContain('outside the project');
    }
  });

  it('cannot write the project (read-only in its box)', async () => {
    const result = await call('mcp__fs__write_file', {
      path: path.join(project, 'planted.txt'),
      content: 'x',
    });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/EROFS|read-only/i);
    expect(fs.existsSync(path.join(project, 'planted.txt'))).toBe(false);
  });
});
