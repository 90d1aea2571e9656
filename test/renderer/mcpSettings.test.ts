import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../main/sandbox/box.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// The settings screen's MCP section against keel serve, with a real MCP server (the SDK fixture) in the box:
// a ready server and its tools, a failed one with its error and stderr, a tool switched off into settings.json.
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
});
