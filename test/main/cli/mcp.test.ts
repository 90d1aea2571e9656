import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import {
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  startSessionFixture,
  type SessionFixture,
} from '../../support/sessionFixture.js';

// `keel mcp` against a real MCP server (test/fixtures/mcp/server.mjs, the SDK's server API) in the real box.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
let fixture: SessionFixture;
let bwrap = false;

beforeAll(async () => {
  await ensureCliBuilt();
  bwrap = (await detectSandbox()).kind === 'bwrap';
  fixture = await startSessionFixture('keel-mcp-cli-');
}, 180_000);
afterAll(async () => {
  await closeSessionFixture(fixture);
});

describe.runIf(process.platform === 'linux')('keel mcp', () => {
  it('adds a server to settings, lists its state and tools, tests it, and keel run uses it', async (context) => {
    if (!bwrap) context.skip();
    const { home, project } = fixture;
    const added = await keel(home, [
      'mcp',
      'add',
      'fixture',
      '--env',
      'FIXTURE_TOKEN=abc',
      '--',
      process.execPath,
      SERVER,
      '--tools=echo,secret',
    ]);
    expect(added).toMatchObject({ code: 0, stdout: 'added MCP server fixture to your settings\n' });
    const settings = JSON.parse(fs.readFileSync(path.join(home, 'settings.json'), 'utf8')) as {
      mcp: unknown;
    };
    expect(settings.mcp).toEqual({
      servers: {
        fixture: {
          command: process.execPath,
          args: [SERVER, '--tools=echo,secret'],
          env: { FIXTURE_TOKEN: 'abc' },
        },
      },
      disabledTools: [],
    });

    const listed = await keel(home, ['mcp', 'list', '--project', project]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      'fixture (settings, stdio): ready\n  mcp__fixture__echo\n  mcp__fixture__secret\n',
    );
    expect(await keel(home, ['mcp', 'test', 'fixture', '--project', project])).toMatchObject({ code: 0 });
    expect(await keel(home, ['mcp', 'test', 'nothing', '--project', project])).toMatchObject({
      code: 2,
      stderr: 'keel: no MCP server "nothing" is configured (keel mcp list shows them)\n',
    });

    fixture.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ id: 'e1', name: 'mcp__fixture__echo', arguments: { text: 'from keel run' } }],
      },
      { kind: 'reply', text: 'echoed' },
    );
    const run = await keel(home, newSessionArgs(fixture, { policy: 'ask', prompt: 'echo it' }));
    expect(run.code).toBe(0);
    const events = eventsOf(home, onlySessionId(home));
    const result = events.find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
    expect(result?.content).toContain('echo: from keel run');
    expect(events.some((e) => e.kind === 'mcp_tools_listed')).toBe(true);

    expect(await keel(home, ['mcp', 'remove', 'fixture'])).toMatchObject({ code: 0 });
    expect((await keel(home, ['mcp', 'list', '--project', project])).stdout).toBe(
      'no MCP servers configured\n',
    );
    expect(await keel(home, ['mcp', 'remove', 'fixture'])).toMatchObject({ code: 2 });
  }, 120_000);

  it("writes a project's .mcp.json trusted by who added it; a changed file is not approved until keel mcp approve", async (context) => {
    if (!bwrap) context.skip();
    const { home, project } = fixture;
    expect(
      await keel(home, [
        'mcp',
        'add',
        'proj',
        '--project',
        project,
        '--',
        process.execPath,
        SERVER,
        '--tools=echo',
      ]),
    ).toMatchObject({ code: 0 });
    const file = path.join(project, '.mcp.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      mcpServers: { proj: { command: process.execPath, args: [SERVER, '--tools=echo'], env: {} } },
    });
    expect((await keel(home, ['mcp', 'list', '--project', project])).stdout).toBe(
      'proj (project, stdio): ready\n  mcp__proj__echo\n',
    );

    fs.writeFileSync(
      file,
      JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: [SERVER] } } }),
    );
    const untrusted = await keel(home, ['mcp', 'list', '--project', project]);
    expect(untrusted.stdout).toBe(
      `no MCP servers configured\n${fs.realpathSync(file)}: not approved (servers proj do not start): keel mcp approve --project ${fs.realpathSync(project)}\n`,
    );
    expect(await keel(home, ['mcp', 'approve', '--project', project])).toMatchObject({ code: 0 });
    expect((await keel(home, ['mcp', 'list', '--project', project])).stdout).toMatch(
      /^proj \(project, stdio\): ready\n {2}mcp__proj__echo\n/,
    );
    expect(await keel(home, ['mcp', 'revoke', '--project', project])).toMatchObject({ code: 0 });
    expect((await keel(home, ['mcp', 'list', '--project', project])).stdout).toMatch(/not approved/);
    expect(await keel(home, ['mcp', 'add', 'bad__name', '--', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/cannot name an MCP server/) as unknown,
    });
    expect(
      await keel(home, ['mcp', 'add', 'both', '--url', 'https://x.example/mcp', '--', 'x']),
    ).toMatchObject({ code: 2 });
  }, 120_000);
});
