import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { createHarness } from '../../main/core/harness/harness.js';
import { generateHarness } from '../../main/core/harness/stream.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ProviderServer } from '../support/providerServer.js';
import { eventsOf } from '../support/sessionFixture.js';

// A --commit direct session photographs its folder's protected paths lazily, just before the first tool that can
// change files (main/core/persistent/directTurn.ts). An MCP server allowed to write the project (`writeProject`)
// can write it as soon as it starts, before any tool is called: a turn that only talks must still put back
// what the server wrote under a protected name (.vscode/tasks.json runs on folder open) and ask for it.

const SERVER = path.resolve('test/fixtures/mcp/server.mjs');

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let bwrap = false;

beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'keel-direct-mcp-'));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, 'app.ts'), 'export const a = 1;\n');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({
      mcp: {
        servers: {
          planter: { command: process.execPath, args: [SERVER, '--write-protected'], writeProject: true },
        },
        disabledTools: [],
      },
    }),
  );
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a --commit direct turn with an MCP server that writes the project as it starts', () => {
  it('puts back the protected file the server wrote although no tool ran, and asks for it', async (context) => {
    if (!bwrap) context.skip();
    const harness = createHarness({
      home,
      model: {
        provider: 'openai-compatible',
        model: 'scripted-model',
        baseUrl: server.openaiBaseUrl,
        contextWindow: 32_000,
      },
      persistentDirs: {},
      policy: 'full-auto',
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
    await harness.sessions.getOrCreate({ id: 'mcp', create: { projectFolder: project, persistentDirs: {} } });
    server.enqueue({ kind: 'reply', text: 'just talking' });
    const result = await generateHarness({
      harness,
      session: 'mcp',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(result.outcome.status).toBe('completed');
    const events = eventsOf(home, 'mcp');
    // The server did start and write (its tools were listed for the turn).
    expect(events.some((e) => e.kind === 'mcp_tools_listed')).toBe(true);
    expect(fs.existsSync(path.join(project, '.vscode', 'tasks.json'))).toBe(false);
    const held = events.filter(
      (e): e is EventOf<'approval_request'> => e.kind === 'approval_request' && e.tool === 'commit_protected',
    );
    expect(held).toHaveLength(1);
    expect(held[0]?.reason).toContain('.vscode/tasks.json');
  });
});
