import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { writeMcpSettings } from '../../support/turnHost.js';

// `keel approve --scope tool` and `keel mcp rules` through the built CLI, with the fixture MCP server in the box.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const NOTE = 'mcp__fixture__write_note';
let fixture: SessionFixture;
let bwrap = false;

beforeAll(async () => {
  await ensureCliBuilt();
  bwrap = (await detectSandbox()).kind === 'bwrap';
  fixture = await startSessionFixture('keel-mcp-rules-cli-');
  writeMcpSettings(fixture.home, { fixture: { command: process.execPath, args: [SERVER] } });
}, 180_000);
afterAll(async () => {
  await closeSessionFixture(fixture);
});

describe.runIf(process.platform === 'linux')('keel approve --scope tool', () => {
  it('offers the scope tool for an MCP tool, keeps it as the project rule keel mcp rules lists and revokes', async (context) => {
    if (!bwrap) context.skip();
    const { home, project } = fixture;
    fixture.server.enqueue(
      { kind: 'reply', toolCalls: [{ id: 'n1', name: NOTE, arguments: { text: 'x' } }] },
      { kind: 'reply', text: 'noted' },
    );
    const run = await keel(home, newSessionArgs(fixture, { policy: 'ask', prompt: 'note it' }));
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/--scope once\|session\|tool\n/);
    const id = onlySessionId(home);

    const approved = await keel(home, ['approve', id, '--scope', 'tool', '--resume']);
    expect(approved.code).toBe(0);
    const real = fs.realpathSync(project);
    expect(approved.stderr).toContain(`${NOTE} now runs without asking in every session of ${real}`);
    expect(eventsOf(home, id).find((e) => e.kind === 'approval_granted')).toMatchObject({ scope: 'tool' });

    const listed = await keel(home, ['mcp', 'rules', '--project', project, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual({
      rules: [expect.objectContaining({ tool: NOTE, project: real, via: 'keel approve', sessionId: id })],
    });
    expect((await keel(home, ['mcp', 'rules', '--project', project])).stdout).toMatch(
      new RegExp(`^TOOL +PROJECT +ADDED +VIA\\n${NOTE} +${real} `),
    );

    const revoked = await keel(home, ['mcp', 'rules', '--project', project, '--revoke', NOTE]);
    expect(revoked).toMatchObject({
      code: 0,
      stdout: `revoked: ${NOTE} asks again in ${real} from the next turn\n`,
    });
    expect((await keel(home, ['mcp', 'rules', '--project', project])).stdout).toBe(
      `no tool rules in ${real}\n`,
    );
    expect(await keel(home, ['mcp', 'rules', '--project', project, '--revoke', NOTE])).toMatchObject({
      code: 2,
    });
    // A built-in tool's request refuses the scope.
    fixture.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'r1', name: 'run_command', arguments: { command: 'true' } }],
    });
    expect((await keel(home, ['run', '--session', id, 'run it'])).code).toBe(3);
    const refused = await keel(home, ['approve', id, '--scope', 'tool']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the scope "tool" is for MCP tools');
  }, 120_000);
});
