import fs from 'node:fs';
import path from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getMcpPrompt, listMcpPrompts, listMcpResources } from '../../../main/core/harness/index.js';
import { startMcpSession } from '../../../main/mcp/session.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import type { ToolContext } from '../../../main/tools/types.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { type LoopbackMcpServer, startLoopbackMcpServer } from '../../support/mcpHttpServer.js';

// MCP beyond tools, against a real Streamable HTTP server on loopback (the SDK's server API).
let server: LoopbackMcpServer;
let dir: string;

beforeEach(async () => {
  server = await startLoopbackMcpServer();
  dir = makeTempDir('keel-mcp-resources-');
});
afterEach(async () => {
  await server.close();
  removeTempDir(dir);
});

async function start() {
  return startMcpSession({
    plan: {
      servers: [{ name: 'web', source: 'settings', config: { url: server.url, headers: {} } }],
      project: { status: 'absent' },
      problems: [],
    },
    box: {
      sandbox: await detectSandbox(),
      projectRoot: dir,
      scratchRoot: dir,
      network: { allow: [`127.0.0.1:${server.port}`] },
    },
  });
}

const ctx = () =>
  ({
    idempotencyKey: 'ev3-read_mcp_resource',
    artifactsDir: dir,
    redactor: { redact: (t: string) => t },
  }) as unknown as ToolContext;

describe('MCP resources and prompts', () => {
  it('lists resources per server and gives the model read_mcp_resource to read one', async () => {
    const session = await start();
    try {
      expect(session.resources).toEqual([
        {
          server: 'web',
          uri: 'file:///docs/readme.md',
          name: 'readme',
          title: 'Read me',
          description: 'How the project is laid out.',
          mimeType: 'text/markdown',
        },
      ]);
      const read = session.tools.find((tool) => tool.name === 'read_mcp_resource');
      expect(read?.description).toContain(
        '- web: file:///docs/readme.md (Read me): How the project is laid out.',
      );
      expect(read?.kind).toBe('read');
      const outcome = await read?.execute({ server: 'web', uri: 'file:///docs/readme.md' }, ctx());
      expect(outcome).toMatchObject({ isError: false });
      expect(outcome?.content).toContain('# Layout\nsrc/ holds the code.');
      // A templated resource the server did not list is read by its uri all the same.
      expect((await read?.execute({ server: 'web', uri: 'note://todo' }, ctx()))?.content).toContain(
        'note todo',
      );
      const unknown = await read?.execute({ server: 'nope', uri: 'x://y' }, ctx());
      expect(unknown).toMatchObject({ isError: true });
      expect(unknown?.content).toMatch(/no MCP server \\"nope\\" in this session \(servers: web\)/);
      // The client speaks the newest revision its SDK knows.
      expect([...server.protocolVersions]).toEqual([LATEST_PROTOCOL_VERSION]);
    } finally {
      await session.close();
    }
  });

  it('lists prompts with their arguments and fills one, refusing a missing required argument', async () => {
    const session = await start();
    try {
      expect(await session.listPrompts()).toEqual([
        {
          server: 'web',
          name: 'review',
          title: 'Review a file',
          description: 'Asks for a review of one file.',
          arguments: [
            { name: 'file', description: 'the file to review', required: true },
            { name: 'focus', required: false },
          ],
        },
      ]);
      expect(await session.getPrompt('web', 'review', { file: 'src/a.ts', focus: 'errors' })).toEqual({
        messages: [{ role: 'user', text: 'Review src/a.ts for errors.' }],
      });
      await expect(session.getPrompt('web', 'review', {})).rejects.toThrow('prompt "review" needs file');
      await expect(session.getPrompt('web', 'nope', {})).rejects.toThrow('has no prompt "nope"');
    } finally {
      await session.close();
    }
  });

  it("reaches hosts through the core's front door: listMcpPrompts, getMcpPrompt, listMcpResources", async () => {
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({ mcp: { servers: { web: { url: server.url } } } }),
    );
    const allow = { networkAllow: [`127.0.0.1:${server.port}`] };
    expect((await listMcpPrompts(home, undefined, allow)).map((p) => `${p.server}/${p.name}`)).toEqual([
      'web/review',
    ]);
    expect((await listMcpResources(home, undefined, allow)).map((r) => r.uri)).toEqual([
      'file:///docs/readme.md',
    ]);
    expect(await getMcpPrompt(home, undefined, 'web', 'review', { file: 'x' }, allow)).toEqual({
      messages: [{ role: 'user', text: 'Review x.' }],
    });
    await expect(getMcpPrompt(home, undefined, 'web', 'review', {}, allow)).rejects.toThrow('needs file');
    // No host allowed: the server is not reached and the refusal says why.
    await expect(getMcpPrompt(home, undefined, 'web', 'review', { file: 'x' })).rejects.toThrow(
      /did not start: .*--allow-host/,
    );
  });
});
