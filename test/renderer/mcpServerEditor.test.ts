import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectMcpServers } from '../../main/core/harness/index.js';
import { type OAuthFixture, startOAuthFixture } from '../support/oauthServer.js';
import { setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

// Issue 33 (#37 item 6): Settings → MCP servers added, edited and removed in the page against keel serve, with
// keel mcp add's validation and words, and an HTTP server's OAuth sign-in (a loopback authorization server
// speaking the spec): under keel serve the page shows the authorization URL, the "browser" follows it, the state
// turns to signed in; sign out; a grant the server revoked shows as revoked. No token in the page or on disk.
describe.skipIf(!HAS_CHROMIUM)('settings: MCP servers edited in place', () => {
  let auth: OAuthFixture | undefined;
  const oauth = () => {
    if (!auth) throw new Error('the OAuth fixture did not start');
    return auth;
  };
  const app = setUpApp({
    prefix: 'keel-ui-mcpedit-',
    prepare: async () => {
      auth = await startOAuthFixture();
    },
    teardown: () => auth?.close(),
  });
  const settingsServers = () =>
    (
      JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
        mcp?: { servers?: object };
      }
    ).mcp?.servers ?? {};

  it('adds a stdio server (refusing a bad name with the CLI words), edits and renames it, and removes it', async () => {
    const watched = app.watch('mcp-edit');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const editor = page.getByRole('region', { name: 'Servers in your settings' });
    await editor.getByText('No servers in your settings.').waitFor();

    await editor.getByRole('button', { name: 'Add server' }).click();
    const form = editor.getByRole('form', { name: 'Add MCP server' });
    await form.getByLabel('Server name').fill('bad__name');
    await form.getByLabel('Command', { exact: true }).fill('/usr/bin/env\nnode\n--version');
    await form.getByLabel('Environment').fill('MODE=fast');
    await form.getByRole('button', { name: 'Save server' }).click();
    await editor
      .getByRole('alert')
      .getByText(/"bad__name" cannot name an MCP server/)
      .waitFor();
    expect(settingsServers()).toEqual({});

    await form.getByLabel('Environment').fill('MODE fast');
    await form.getByLabel('Server name').fill('tools');
    await form.getByRole('button', { name: 'Save server' }).click();
    await editor
      .getByRole('alert')
      .getByText(/environment variable "MODE fast" is not NAME=VALUE/)
      .waitFor();
    await form.getByLabel('Environment').fill('MODE=fast');
    await form.getByRole('button', { name: 'Save server' }).click();
    const row = editor.getByRole('listitem', { name: 'Configured MCP server tools' });
    await row.waitFor();
    expect(settingsServers()).toEqual({
      tools: { command: '/usr/bin/env', args: ['node', '--version'], env: { MODE: 'fast' } },
    });

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = editor.getByRole('form', { name: 'Edit MCP server tools' });
    expect(await edit.getByLabel('Command', { exact: true }).inputValue()).toBe(
      '/usr/bin/env\nnode\n--version',
    );
    await edit.getByLabel('Server name').fill('tools2');
    await edit.getByLabel('Command', { exact: true }).fill('/usr/bin/env\nnode\n-v');
    await edit.getByLabel('Allowed hosts').fill('registry.npmjs.org');
    await edit.getByRole('button', { name: 'Save server' }).click();
    const renamed = editor.getByRole('listitem', { name: 'Configured MCP server tools2' });
    await renamed.waitFor();
    expect(settingsServers()).toEqual({
      tools2: {
        command: '/usr/bin/env',
        args: ['node', '-v'],
        env: { MODE: 'fast' },
        networkAllow: ['registry.npmjs.org'],
      },
    });

    await renamed.getByRole('button', { name: 'Remove' }).click();
    await renamed.getByRole('button', { name: 'Yes, remove' }).click();
    await editor.getByText('No servers in your settings.').waitFor();
    expect(settingsServers()).toEqual({});
    expect(watched.errors).toEqual([]);
  }, 60_000);

  it('signs an HTTP server in through the shown URL, signs it out, and shows a revoked grant', async () => {
    const watched = app.watch('mcp-sign-in');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const editor = page.getByRole('region', { name: 'Servers in your settings' });
    await editor.getByRole('button', { name: 'Add server' }).click();
    const form = editor.getByRole('form', { name: 'Add MCP server' });
    await form.getByLabel('Server name').fill('secure');
    await form.getByText('a URL (Streamable HTTP)').click();
    await form.getByLabel('Server URL').fill(oauth().mcpUrl);
    await form.getByRole('button', { name: 'Save server' }).click();
    const row = editor.getByRole('listitem', { name: 'Configured MCP server secure' });
    await row.getByText('not signed in').waitFor();
    // keel serve has no OS keychain: the page says where tokens go.
    expect(await editor.textContent()).toMatch(/kept encrypted in .*mcp-credentials with a key file .*0600/);

    await row.getByRole('button', { name: 'Sign in' }).click();
    const link = row.getByRole('status').getByRole('link');
    await link.waitFor();
    const href = (await link.getAttribute('href')) ?? '';
    expect(new URL(href).searchParams.get('code_challenge_method')).toBe('S256');
    // The browser: the authorization server sends it back to Keel's loopback redirect.
    const answer = await fetch(href, { redirect: 'manual' });
    expect((await fetch(answer.headers.get('location') ?? '')).status).toBe(200);
    await row.getByText('signed in', { exact: true }).waitFor();
    expect(oauth().grants).toEqual(['authorization_code']);

    // No token in the page, nor anywhere in the home in the clear, nor in keel serve's output.
    const text = (await page.content()) + app.serve.process.stdout() + app.serve.process.stderr();
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.push(fs.readFileSync(full).toString('latin1'));
      }
    };
    walk(app.home);
    for (const token of oauth().issued) {
      expect(text).not.toContain(token);
      expect(files.some((bytes) => bytes.includes(token))).toBe(false);
    }

    await row.getByRole('button', { name: 'Sign out' }).click();
    await row.getByText('not signed in').waitFor();

    // Signed in again, then the server withdraws the grant: the next use finds it revoked, and the page says so.
    await row.getByRole('button', { name: 'Sign in' }).click();
    await row.getByRole('status').getByRole('link').waitFor();
    const again = (await row.getByRole('status').getByRole('link').getAttribute('href')) ?? '';
    const second = await fetch(again, { redirect: 'manual' });
    await fetch(second.headers.get('location') ?? '');
    await row.getByText('signed in', { exact: true }).waitFor();
    oauth().revokeAll();
    const used = await inspectMcpServers(app.home, undefined, {
      only: 'secure',
      networkAllow: [`127.0.0.1:${oauth().port}`],
    });
    expect(used.servers[0]?.state.state).toBe('failed');
    await page.reload();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await row.getByText('sign-in revoked').waitFor();
    expect(watched.errors).toEqual([]);
  }, 90_000);
});
