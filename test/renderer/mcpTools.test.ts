import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createSession, readEvents, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

// MCP tools in the app against keel serve, with the SDK fixture server in the box: an image a tool returns,
// shown inline from the session's artifact; a write tool allowed "in this project" from the approval panel
// (scope tool), the rule it leaves in Settings, its revocation there (the next turn asks again), and revoking
// the grant from the session's grants list (which revokes the rule too). Issue 33: a read resource's update that
// arrives during the turn, shown in the transcript while that turn still runs.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const NOTE = 'note://fixture/note';
const bwrap = (await detectSandbox()).kind === 'bwrap';

describe.skipIf(!HAS_CHROMIUM || !bwrap)('MCP tools in the app', () => {
  const app = setUpApp({
    prefix: 'keel-ui-mcp-tools-',
    prepare: (world) => {
      const file = path.join(world.home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      settings.mcp = {
        servers: {
          fixture: { command: process.execPath, args: [SERVER, '--resources'] },
          // Takes a moment to start, so a check is seen while it runs. The script is named in argv (not inside
          // an `sh -c` string): the box binds a server's program folders from its argv, and a checkout under
          // /tmp (a fresh clone in CI) is otherwise hidden from it.
          slow: { command: process.execPath, args: [SERVER, '--tools=echo', '--start-delay=2000'] },
        },
      };
      fs.writeFileSync(file, JSON.stringify(settings));
      fs.mkdirSync(path.join(world.dir, 'tools-project'), { recursive: true });
    },
  });

  it("shows a tool's image inline from its artifact, and allows a tool in the project until revoked in Settings", async () => {
    const watched = app.watch('mcp-tools');
    const page = await app.goto();
    const project = path.join(app.dir, 'tools-project');
    const sessionId = await createSession(page, {
      title: 'MCP tools',
      projectFolder: project,
      policy: 'ask',
    });

    app.provider.enqueue(
      { kind: 'reply', text: 'Drawing.', toolCalls: [{ name: 'mcp__fixture__image', arguments: {} }] },
      { kind: 'reply', text: 'There is the dot.' },
    );
    await sendMessage(page, 'Show me the image.');
    await page.getByText('There is the dot.').waitFor({ timeout: 30_000 });
    const image = page.getByRole('img', {
      name: /^Image 1 from mcp__fixture__image \(image\/png, \d+ bytes\)$/,
    });
    await image.waitFor();
    // Decoded (a broken image has no natural size), from a data: URL: nothing was fetched for it.
    const shown = await image.evaluate((img: { naturalWidth: number; src: string }) => ({
      width: img.naturalWidth,
      scheme: img.src.slice(0, 22),
    }));
    expect(shown).toEqual({ width: 1, scheme: 'data:image/png;base64,' });
    const result = (await readEvents(page, sessionId)).find(
      (e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.tool === 'mcp__fixture__image',
    );
    const handle = result?.images?.[0]?.handle as string;
    const bytes = fs.readFileSync(path.join(app.home, 'sessions', sessionId, 'artifacts', handle));
    expect(await image.getAttribute('src')).toBe(`data:image/png;base64,${bytes.toString('base64')}`);
    // Only a result's image is served so: another artifact, or a path out, is not found.
    const refused = await page.evaluate<{ ok: boolean; error?: { code: string } }>(
      `window.keel.artifacts.image(${JSON.stringify({ sessionId, handle: '../../settings.json' })})`,
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'not_found' } });
    await screenshot(page, 'mcp-01-image');

    // A write tool asks; "Always allow … in this project" records scope tool and the project's rule.
    app.provider.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ name: 'mcp__fixture__write_note', arguments: { text: 'a' } }],
      },
      { kind: 'reply', text: 'Tried to write.' },
    );
    await sendMessage(page, 'Write a note.');
    const card = page.getByRole('article', { name: 'Approval needed: mcp__fixture__write_note' });
    await card.waitFor({ timeout: 30_000 });
    await screenshot(page, 'mcp-02-approval');
    await card.getByRole('button', { name: 'Always allow mcp__fixture__write_note in this project' }).click();
    await page.getByText('Tried to write.').waitFor({ timeout: 30_000 });
    await page
      .getByRole('list', { name: 'Decisions' })
      .getByText(/Allowed mcp__fixture__write_note.*for this project/)
      .waitFor();
    const granted = (await readEvents(page, sessionId)).find((e) => e.kind === 'approval_granted');
    expect(granted).toMatchObject({ scope: 'tool' });
    const rulesFile = path.join(app.home, 'tool-rules.jsonl');
    expect(fs.readFileSync(rulesFile, 'utf8')).toContain('"tool":"mcp__fixture__write_note"');

    // Settings lists the rule for the project and revokes it.
    await page.getByRole('button', { name: 'Settings' }).click();
    const rules = page.getByRole('article', { name: 'Tool rules' });
    await rules.getByText('mcp__fixture__write_note').waitFor();
    await screenshot(page, 'mcp-03-rules');
    await rules.getByRole('button', { name: 'Revoke mcp__fixture__write_note' }).click();
    await rules.getByText('No tool rules for this project.').waitFor();
    expect(fs.readFileSync(rulesFile, 'utf8')).toContain('"kind":"tool_rule_revoked"');

    // Back in the session: the next turn records the rules in effect (none), so the tool asks again.
    await page.getByRole('option', { name: /MCP tools/ }).click();
    await page.getByRole('heading', { name: 'MCP tools' }).waitFor();
    app.provider.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ name: 'mcp__fixture__write_note', arguments: { text: 'b' } }],
      },
      { kind: 'reply', text: 'Tried again.' },
    );
    await sendMessage(page, 'Write another note.');
    const again = page.getByRole('article', { name: 'Approval needed: mcp__fixture__write_note' });
    await again.waitFor({ timeout: 30_000 });
    const applied = (await readEvents(page, sessionId)).filter((e) => e.kind === 'tool_rules_applied');
    expect(applied.map((e) => e.kind === 'tool_rules_applied' && e.tools)).toEqual([
      ['mcp__fixture__write_note'],
      [],
    ]);
    await again
      .getByRole('button', { name: 'Always allow mcp__fixture__write_note in this project' })
      .click();
    await page.getByText('Tried again.').waitFor({ timeout: 30_000 });

    // Revoking that grant in the session's grants list revokes the project's rule too.
    const grants = page.locator('details.grants');
    await grants.locator('summary', { hasText: '1 grant in effect' }).click();
    await grants
      .getByRole('listitem', { name: 'Grant: mcp__fixture__write_note for this project' })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await expect
      .poll(() => fs.readFileSync(rulesFile, 'utf8').split('"kind":"tool_rule_revoked"').length - 1)
      .toBe(2);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 120_000);

  it('shows servers as starting while a check runs, then their state and tools', async () => {
    const watched = app.watch('mcp-starting');
    const page = app.page;
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    await page.getByRole('button', { name: 'Check servers' }).click();
    const slow = page.getByRole('article', { name: 'MCP server slow' });
    await slow.locator('.tag', { hasText: 'ready' }).waitFor({ timeout: 30_000 });
    expect(await slow.locator('code').allTextContents()).toEqual(['mcp__slow__echo']);
    await page.getByRole('button', { name: 'Check again' }).click();
    await slow.locator('.tag', { hasText: 'starting' }).waitFor();
    await page.getByRole('button', { name: 'Starting servers…' }).waitFor();
    await screenshot(page, 'mcp-04-starting');
    await slow.locator('.tag', { hasText: 'ready' }).waitFor({ timeout: 30_000 });
    const fixture = page.getByRole('article', { name: 'MCP server fixture' });
    expect(await fixture.locator('.tag').textContent()).toBe('ready');
    expect(await fixture.getByRole('checkbox', { name: 'mcp__fixture__write_note' }).isChecked()).toBe(true);
    expect(watched.errors).toEqual([]);
  }, 120_000);

  it("shows a read resource's update in the transcript while the turn it came in still runs", async () => {
    const watched = app.watch('mcp-resource-updated');
    const page = await app.goto();
    const sessionId = await createSession(page, {
      title: 'MCP note',
      projectFolder: path.join(app.dir, 'tools-project'),
      policy: 'full-auto',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Reading the note.',
        toolCalls: [{ name: 'read_mcp_resource', arguments: { server: 'fixture', uri: NOTE } }],
      },
      {
        kind: 'reply',
        text: 'Changing it.',
        toolCalls: [{ name: 'mcp__fixture__touch_note', arguments: { text: 'second version' } }],
      },
      // The turn waits on its third request until Stop.
      { kind: 'hang' },
    );
    const before = app.provider.requests.length;
    await sendMessage(page, 'Read the note, then change it.');
    await expect.poll(() => app.provider.requests.length, { timeout: 30_000 }).toBe(before + 3);
    await page
      .getByText(`MCP resource updated: ${NOTE} (fixture) changed since it was read; the agent is told`)
      .waitFor();
    // Still that turn: Stop is offered, and the request it waits on tells the model.
    const stop = page.getByRole('button', { name: 'Stop', exact: true });
    await stop.waitFor();
    expect(app.provider.requests.at(-1)?.raw).toContain(
      `MCP resource updated: ${NOTE} on server \\"fixture\\"`,
    );
    await screenshot(page, 'mcp-05-resource-updated');
    await stop.click();
    await expect
      .poll(() => page.locator('.session-header .badge').getAttribute('data-status'))
      .toBe('interrupted');
    const updated = (await readEvents(page, sessionId)).filter((e) => e.kind === 'mcp_resource_updated');
    expect(updated).toMatchObject([{ server: 'fixture', uri: NOTE }]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 120_000);
});
