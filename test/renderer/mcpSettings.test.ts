import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rememberProject } from '../../main/ipc/recentProjects.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// The settings screen's MCP section against keel serve, with a real MCP server (the SDK fixture) in the box:
// a ready server and its tools, a failed one with its error and stderr, a tool switched off into settings.json;
// a project's .mcp.json (the most recent project) not approved, then approved from the screen.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const bwrap = (await detectSandbox()).kind === 'bwrap';

describe.skipIf(!HAS_CHROMIUM || !bwrap)('settings: MCP servers', () => {
  const app = setUpApp({
    prefix: 'keel-ui-mcp-',
    prepare: (world) => {
      const file = path.join(world.home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      settings.mcp = {
        servers: {
          fixture: { command: process.execPath, args: [SERVER, '--tools=echo,secret'] },
          broken: { command: '/nonexistent/mcp-server' },
        },
      };
      fs.writeFileSync(file, JSON.stringify(settings));
      const project = path.join(world.dir, 'mcp-project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(
        path.join(project, '.mcp.json'),
        JSON.stringify({
          mcpServers: { proj: { command: process.execPath, args: [SERVER, '--tools=echo'] } },
        }),
      );
      rememberProject(world.home, fs.realpathSync(project));
    },
  });

  it('lists each server with its state and tools, and switches a tool off for every session', async () => {
    const watched = app.watch('mcp-settings');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    await page.getByRole('button', { name: 'Check servers' }).click();

    const fixture = page.getByRole('article', { name: 'MCP server fixture' });
    await fixture.getByText('ready').waitFor({ timeout: 30_000 });
    expect(await fixture.locator('code').allTextContents()).toEqual([
      'mcp__fixture__echo',
      'mcp__fixture__secret',
    ]);
    const broken = page.getByRole('article', { name: 'MCP server broken' });
    expect(await broken.getByText('failed').count()).toBe(1);
    expect(await broken.locator('pre').textContent()).toMatch(/nonexistent/);

    // A controlled checkbox: it changes once settings.json has (click, then wait for both).
    await fixture.getByRole('checkbox', { name: 'mcp__fixture__secret' }).click();
    await expect
      .poll(
        () =>
          (
            JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
              mcp: { disabledTools: string[] };
            }
          ).mcp.disabledTools,
      )
      .toEqual(['mcp__fixture__secret']);
    await page.getByRole('button', { name: 'Check again' }).click();
    await fixture.getByText('ready').waitFor({ timeout: 30_000 });
    expect(await fixture.getByRole('checkbox', { name: 'mcp__fixture__secret' }).isChecked()).toBe(false);
    expect(await fixture.getByRole('checkbox', { name: 'mcp__fixture__echo' }).isChecked()).toBe(true);
    expect(watched.errors).toEqual([]);
  }, 120_000);

  it("shows the current project's .mcp.json as not approved, and Approve records the approval and starts its servers", async () => {
    const watched = app.watch('mcp-settings-project');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    const project = fs.realpathSync(path.join(app.dir, 'mcp-project'));
    await expect
      .poll(() => page.getByRole('combobox', { name: 'MCP project folder' }).inputValue())
      .toBe(project);
    await page.getByRole('button', { name: 'Check servers' }).click();

    const file = page.getByRole('article', { name: 'Project MCP config' });
    await file.getByText('not approved').waitFor({ timeout: 30_000 });
    expect(await file.textContent()).toContain('Servers: proj');
    // Not approved: its server was not started.
    expect(await page.getByRole('article', { name: 'MCP server proj' }).count()).toBe(0);
    const approvals = path.join(app.home, 'mcp-approvals.jsonl');
    expect(fs.existsSync(approvals) ? fs.readFileSync(approvals, 'utf8') : '').not.toContain(project);

    await file.getByRole('button', { name: 'Approve' }).click();
    await file.getByText('approved', { exact: true }).waitFor({ timeout: 30_000 });
    const server = page.getByRole('article', { name: 'MCP server proj' });
    await server.getByText('ready').waitFor({ timeout: 30_000 });
    expect(await server.locator('code').allTextContents()).toEqual(['mcp__proj__echo']);
    // The approval is the CLI's: one event naming the folder and the file's hash, made by the app.
    const lines = fs
      .readFileSync(approvals, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({
      kind: 'mcp_config_approved',
      project,
      servers: ['proj'],
      via: 'app settings',
      configHash: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
    });
    expect(await file.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(watched.errors).toEqual([]);
  }, 120_000);
});
