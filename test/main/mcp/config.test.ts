import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planMcpServers, readProjectMcpConfig } from '../../../main/mcp/config.js';
import { appendMcpApproval, approvedConfigHash, readMcpApprovals } from '../../../main/store/mcpApprovals.js';
import { readSettings, Settings } from '../../../main/store/settings.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-mcp-config-'));
});
afterEach(() => removeTempDir(dir));

const write = (text: string) => fs.writeFileSync(path.join(dir, '.mcp.json'), text);

describe('.mcp.json', () => {
  it('reads stdio and HTTP servers in the format Claude Code and Cursor use, hashed by their bytes', () => {
    write(
      JSON.stringify({
        mcpServers: {
          tracker: { command: 'npx', args: ['-y', 'tracker-mcp'], env: { TOKEN: 'x' } },
          docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer y' } },
        },
      }),
    );
    const config = readProjectMcpConfig(dir);
    expect(config.status).toBe('valid');
    if (config.status !== 'valid') return;
    expect(config.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(config.servers.map((s) => [s.name, s.source])).toEqual([
      ['tracker', 'project'],
      ['docs', 'project'],
    ]);
    expect(config.servers[0]?.config).toEqual({
      command: 'npx',
      args: ['-y', 'tracker-mcp'],
      env: { TOKEN: 'x' },
    });
  });

  it('is absent when there is no file, and invalid with one line naming the problem otherwise', () => {
    expect(readProjectMcpConfig(dir)).toEqual({ status: 'absent' });
    write('{ not json');
    expect(readProjectMcpConfig(dir)).toMatchObject({
      status: 'invalid',
      error: expect.stringMatching(/not valid JSON/) as unknown,
    });
    write(JSON.stringify({ mcpServers: { a__b: { command: 'x' } } }));
    expect(readProjectMcpConfig(dir)).toMatchObject({
      status: 'invalid',
      error: expect.stringMatching(/mcpServers\.a__b.*"__"/) as unknown,
    });
    write(JSON.stringify({ mcpServers: { a: { command: 'x', url: 'https://x' } } }));
    expect(readProjectMcpConfig(dir).status).toBe('invalid');
    write(JSON.stringify({ mcpServers: { a: { command: 'x', env: { 'BAD NAME': 'v' } } } }));
    expect(readProjectMcpConfig(dir).status).toBe('invalid');
    fs.rmSync(path.join(dir, '.mcp.json'));
    fs.symlinkSync('/etc/passwd', path.join(dir, '.mcp.json'));
    expect(readProjectMcpConfig(dir)).toMatchObject({
      status: 'invalid',
      error: '.mcp.json is not a regular file',
    });
  });
});

describe('trust', () => {
  const settingsServers = { mine: { command: 'my-server', args: [], env: {} } };

  it("starts the project's servers only while its exact bytes are approved; a changed file asks again", () => {
    write(JSON.stringify({ mcpServers: { tracker: { command: 'tracker' } } }));
    const first = readProjectMcpConfig(dir);
    if (first.status !== 'valid') throw new Error('expected a valid config');
    const home = path.join(dir, 'home');
    expect(approvedConfigHash(readMcpApprovals(home), dir)).toBeNull();
    const untrusted = planMcpServers(settingsServers, first, null);
    expect(untrusted.servers.map((s) => s.name)).toEqual(['mine']);
    expect(untrusted.project).toEqual({ status: 'untrusted', hash: first.hash, servers: ['tracker'] });

    appendMcpApproval(home, {
      kind: 'mcp_config_approved',
      project: dir,
      configHash: first.hash,
      servers: ['tracker'],
      via: 'test',
    });
    const approved = approvedConfigHash(readMcpApprovals(home), dir);
    expect(planMcpServers(settingsServers, first, approved).servers.map((s) => s.name)).toEqual([
      'mine',
      'tracker',
    ]);

    write(JSON.stringify({ mcpServers: { tracker: { command: 'tracker', args: ['--evil'] } } }));
    const changed = readProjectMcpConfig(dir);
    expect(planMcpServers(settingsServers, changed, approved).project.status).toBe('untrusted');

    appendMcpApproval(home, { kind: 'mcp_config_revoked', project: dir, configHash: '', via: 'test' });
    expect(approvedConfigHash(readMcpApprovals(home), dir)).toBeNull();
    // A torn line approves nothing and breaks nothing.
    fs.appendFileSync(path.join(home, 'mcp-approvals.jsonl'), '{"kind":"mcp_config_appro');
    expect(readMcpApprovals(home)).toHaveLength(2);
  });

  it('keeps the settings server when the project declares one of the same name, and says so', () => {
    write(JSON.stringify({ mcpServers: { mine: { command: 'impostor' } } }));
    const config = readProjectMcpConfig(dir);
    if (config.status !== 'valid') throw new Error('expected a valid config');
    const plan = planMcpServers(settingsServers, config, config.hash);
    expect(plan.servers).toEqual([{ name: 'mine', source: 'settings', config: settingsServers.mine }]);
    expect(plan.problems).toEqual([
      `the project's MCP server "mine" is not started: a server of that name is in your settings`,
    ]);
  });

  it("takes servers for every project from settings.json's mcp section", () => {
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({
        mcp: {
          servers: { fixture: { command: 'node', args: ['x.mjs'] } },
          disabledTools: ['mcp__fixture__crash'],
        },
      }),
    );
    expect(readSettings(home).mcp).toEqual({
      servers: { fixture: { command: 'node', args: ['x.mjs'], env: {} } },
      disabledTools: ['mcp__fixture__crash'],
    });
    expect(Settings.parse({}).mcp).toEqual({ servers: {}, disabledTools: [] });
  });
});
