import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveProjectSetup } from '../../main/core/harness/index.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';
import { artifactScreenshot } from './layoutMeasure.js';
import { startLoopbackMcpServer } from '../support/mcpHttpServer.js';

/*
 * Issue 37, the composer in a browser against `keel serve`: the `/` menu of Keel's commands (listed by the
 * core through commands.list) and what they do, `@` mentions completed from the project (git's list, its
 * .gitignore honoured), ↑/↓ through earlier prompts, and a prompt too large for the model's window refused
 * with a sentence before anything is recorded.
 */

let project: string;

describe.skipIf(!HAS_CHROMIUM)('the composer', () => {
  const app = setUpApp({
    prefix: 'keel-ui-composer-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'shop');
      for (const file of ['src/app.ts', 'src/cart/apply.ts', 'README.md', 'dist/app.js']) {
        fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
        fs.writeFileSync(path.join(project, file), `// ${file}\n`);
      }
      fs.writeFileSync(path.join(project, '.gitignore'), 'dist/\n');
      spawnSync('git', ['init', '-q'], { cwd: project });
    },
  });

  it('offers / commands and @ mentions, brings prompts back with ↑/↓, and refuses an oversized prompt', async () => {
    const watched = app.watch('composer');
    const page = await app.goto();
    const sessionId = await createSession(page, { title: 'Shop work', projectFolder: project });
    const composer = page.getByLabel('Message');

    // `/`: Keel's commands, filtered as one types.
    await composer.fill('/');
    const commands = page.getByRole('listbox', { name: 'Commands' });
    await commands.getByRole('option', { name: /\/compact/ }).waitFor();
    for (const name of ['/model', '/fork', '/stop', '/rename'])
      await commands.getByRole('option', { name: new RegExp(name) }).waitFor();
    await artifactScreenshot(page, 'composer-commands');
    await composer.pressSequentially('ren');
    await expect.poll(() => commands.getByRole('option').count()).toBe(1);
    await composer.press('Enter');
    await expect.poll(() => composer.inputValue()).toBe('/rename ');
    await composer.pressSequentially('Checkout flow');
    await composer.press('Enter');
    await page.getByRole('heading', { name: 'Checkout flow' }).waitFor();
    expect(await composer.inputValue()).toBe('');
    expect((await readEvents(page, sessionId)).filter((e) => e.kind === 'session_renamed')).toHaveLength(1);

    // /model opens the model switch; /fork asks before it forks.
    await composer.fill('/model');
    await composer.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await composer.fill('/fork');
    await composer.press('Enter');
    const fork = page.getByRole('group', { name: 'Fork this session' });
    await fork.getByText(/This one stays/).waitFor();
    await fork.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => fork.count()).toBe(0);

    // `@`: the project's files and folders, the ignored ones left out.
    await composer.fill('Look at @app');
    const mentions = page.getByRole('listbox', { name: 'Files and folders' });
    await mentions.getByRole('option', { name: 'src/app.ts' }).waitFor();
    expect(await mentions.getByRole('option', { name: /dist/ }).count()).toBe(0);
    await artifactScreenshot(page, 'composer-mentions');
    await screenshot(page, 'composer-01-mentions');
    await composer.press('Enter');
    await expect.poll(() => composer.inputValue()).toBe('Look at @src/app.ts ');
    await composer.pressSequentially('@car');
    await mentions.getByRole('option', { name: /^src\/cart\/\s*folder$/ }).waitFor();
    await composer.press('Tab');
    await expect.poll(() => composer.inputValue()).toBe('Look at @src/app.ts @src/cart/');

    // Prompt history: ↑ and ↓ through what was sent, back to the draft.
    app.provider.enqueue({ kind: 'reply', text: 'First answer.' }, { kind: 'reply', text: 'Second answer.' });
    await sendMessage(page, 'first prompt');
    await page.getByText('First answer.').waitFor();
    await waitForIdle(page);
    await sendMessage(page, 'second prompt');
    await page.getByText('Second answer.').waitFor();
    await waitForIdle(page);
    await composer.fill('');
    await composer.press('ArrowUp');
    await expect.poll(() => composer.inputValue()).toBe('second prompt');
    await composer.press('ArrowUp');
    await expect.poll(() => composer.inputValue()).toBe('first prompt');
    await composer.press('ArrowDown');
    await expect.poll(() => composer.inputValue()).toBe('second prompt');
    await composer.press('ArrowDown');
    await expect.poll(() => composer.inputValue()).toBe('');

    // A 1 MB prompt: a sentence naming the model's window, nothing recorded, nothing sent to the provider.
    const before = (await readEvents(page, sessionId)).filter((e) => e.kind === 'user_message').length;
    const requests = app.provider.requests.length;
    await composer.fill('word '.repeat(210_000));
    await composer.press('Enter');
    const alert = page.getByRole('form', { name: 'Composer' }).getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toMatch(/^This message is too long for scripted-model: it is about [\d,]+ tokens/);
    expect(text).toContain('32,000-token context window');
    expect(text).not.toMatch(/invalid_input|String must|too_big|\(bad_request\)/);
    await artifactScreenshot(page, 'composer-too-large');
    expect((await readEvents(page, sessionId)).filter((e) => e.kind === 'user_message')).toHaveLength(before);
    expect(app.provider.requests.length).toBe(requests);
    // The text stays to be shortened.
    expect((await composer.inputValue()).length).toBeGreaterThan(1_000_000);
    await composer.fill('');

    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  });

  it("lists the project's approved command files in the / menu and sends one expanded, as keel run does", async () => {
    fs.mkdirSync(path.join(project, '.claude', 'commands'), { recursive: true });
    fs.writeFileSync(
      path.join(project, '.claude', 'commands', 'review.md'),
      '---\ndescription: Review a path\nargument-hint: [path] [focus]\n---\nReview $1 with care for $2.\n',
    );
    const page = await app.goto();
    await createSession(page, { title: 'Commands', projectFolder: project });
    const composer = page.getByLabel('Message');
    const commands = page.getByRole('listbox', { name: 'Commands' });
    // Not approved yet: the project's file has no effect.
    await composer.fill('/rev');
    await expect.poll(() => commands.getByRole('option').count()).toBe(0);
    // Approved (keel trust --approve, or Settings, which the session is left for): the menu lists it.
    approveProjectSetup(app.home, project, 'test');
    await composer.fill('');
    await page.reload();
    await composer.fill('/rev');
    const review = commands.getByRole('option', { name: /\/review \[path\] \[focus\]/ });
    await review.waitFor();
    expect(await review.textContent()).toContain('project');
    app.provider.enqueue({ kind: 'reply', text: 'Reviewed.' });
    await composer.fill('/review src/cart speed');
    await composer.press('Escape');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Reviewed.').waitFor();
    await waitForIdle(page);
    expect(JSON.stringify(app.provider.requests.at(-1)?.body)).toContain(
      'Review src/cart with care for speed.',
    );
  });

  it("lists the MCP servers' prompts in the / menu (sent filled by prompts/get) and their resources in the @ menu (sent attached)", async () => {
    const server = await startLoopbackMcpServer();
    try {
      const file = path.join(app.home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(file, JSON.stringify({ ...settings, mcp: { servers: { web: { url: server.url } } } }));
      const page = await app.goto();
      const id = await createSession(page, {
        title: 'Prompts',
        projectFolder: project,
        networkAllow: [`127.0.0.1:${server.port}`],
      });
      const composer = page.getByLabel('Message');
      await composer.fill('/mcp__');
      const option = page
        .getByRole('listbox', { name: 'Commands' })
        .getByRole('option', { name: /\/mcp__web__review <file> \[focus\]/ });
      await option.waitFor();
      expect(await option.textContent()).toContain('Asks for a review of one file. (MCP web)MCP');
      app.provider.enqueue({ kind: 'reply', text: 'Reviewed by prompt.' });
      await composer.fill('/mcp__web__review src/app.ts speed');
      await composer.press('Escape');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Reviewed by prompt.').waitFor();
      await waitForIdle(page);
      expect(JSON.stringify(app.provider.requests.at(-1)?.body)).toContain('Review src/app.ts for speed.');

      // `@` lists the servers' resources beside the files; the chosen one's text goes with the message.
      await composer.fill('Summarize @read');
      const resource = page
        .getByRole('listbox', { name: 'Files and folders' })
        .getByRole('option', { name: /mcp:web:file:\/\/\/docs\/readme\.md/ });
      await resource.waitFor();
      expect(await resource.textContent()).toContain('Read meMCP');
      await resource.click();
      expect(await composer.inputValue()).toBe('Summarize @mcp:web:file:///docs/readme.md ');
      app.provider.enqueue({ kind: 'reply', text: 'Summarized.' });
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Summarized.').waitFor();
      await waitForIdle(page);
      const events = await readEvents(page, id);
      expect(events.filter((e) => e.kind === 'user_message').at(-1)).toMatchObject({
        content:
          'Summarize @mcp:web:file:///docs/readme.md\n\n<mcp-resource server="web" uri="file:///docs/readme.md">\n# Layout\nsrc/ holds the code.\n\n</mcp-resource>',
      });
    } finally {
      await server.close();
    }
  });
});
