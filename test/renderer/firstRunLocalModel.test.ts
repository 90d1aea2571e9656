import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_CATALOGUE } from '../../main/providers/local/catalogue.js';
import { startGgufServer, type GgufServer } from '../support/ggufServer.js';
import { writeTinyModel } from '../support/tinyModel.js';
import { readEvents, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Issue 34: first run's "Use a local model" against keel serve, with the catalogue's downloads pointed at a
 * loopback server (KEEL_TEST_LOCAL_MODEL_BASE) that serves the suite's tiny GGUF as Hugging Face serves LFS files.
 */

let gguf: GgufServer | undefined;
let sha256 = '';
// Unset keys (a developer's own would skip first run); the download origin is added once the server listens.
const serveEnv: NodeJS.ProcessEnv = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  KEEL_OPENAI_COMPATIBLE_API_KEY: undefined,
};

describe.skipIf(!HAS_CHROMIUM)('first run: use a local model', () => {
  const app = setUpApp({
    prefix: 'keel-ui-first-local-',
    scriptedSettings: false,
    serveEnv,
    prepare: async (fixture) => {
      const file = path.join(fixture.dir, 'tiny.gguf');
      writeTinyModel(file);
      const body = fs.readFileSync(file);
      sha256 = createHash('sha256').update(body).digest('hex');
      // 64 KiB every 25 ms: a couple of MB take long enough for the bar to be seen moving.
      gguf = await startGgufServer(body, sha256, 25);
      serveEnv.KEEL_TEST_LOCAL_MODEL_BASE = gguf.base;
      fs.mkdirSync(path.join(fixture.dir, 'project'));
      fs.writeFileSync(path.join(fixture.dir, 'project', 'README.md'), '# a project\n');
    },
    teardown: () => gguf?.close(),
  });

  it('names the download size first, shows the download moving, starts a session pinned to the file, and keeps the model as the default', async () => {
    const watched = app.watch('first-run-local');
    const page = await app.goto();
    const card = page.getByRole('article', { name: 'Use a local model' });
    const size = card.getByTestId('local-model-size');
    await size.waitFor();

    // The size comes before anything else about the model, and is the suggested catalogue entry's.
    const text = (await card.textContent()) ?? '';
    const entry = LOCAL_CATALOGUE.find((candidate) => text.includes(candidate.name));
    expect(entry, text).toBeDefined();
    const gb = `${(entry!.approxBytes / 1e9).toFixed(1)} GB download`;
    expect(await size.textContent()).toContain(gb);
    expect(text.indexOf(gb)).toBeLessThan(text.indexOf(entry!.name));
    expect(text).toContain(entry!.license);
    await expect.poll(async () => card.getByTestId('local-model-why').textContent()).toMatch(/memory|VRAM/);
    await screenshot(page, '13-first-run-local-model');

    // Every value the progress bar takes, recorded in the page as it changes.
    await page.evaluate(`(() => {
      const seen = (window.seenProgress = []);
      new MutationObserver(() => {
        const bar = document.querySelector('progress[aria-label="Download progress"]');
        if (bar && bar.max > 1) seen.push(bar.value / bar.max);
      }).observe(document.body, { subtree: true, attributes: true, childList: true });
    })()`);
    await card.getByRole('button', { name: /^Download \d/ }).click();
    await card.getByRole('progressbar', { name: 'Download progress' }).waitFor();
    await card.getByText(/MB of \d+\.\d MB at .* s left/).waitFor();
    const start = card.getByRole('button', { name: 'Start a session' });
    await start.waitFor();
    const seen = await page.evaluate<number[]>('window.seenProgress');
    const between = new Set(seen.filter((fraction) => fraction > 0 && fraction < 1));
    expect(between.size, `progress values seen: ${seen.join(', ')}`).toBeGreaterThanOrEqual(2);
    const fileName = path.posix.basename(new URL(entry!.url).pathname);
    // Downloaded from the loopback server only, whole, once.
    expect(gguf!.ranges.length).toBe(1);
    const stored = path.join(app.home, 'models', fileName);
    expect(createHash('sha256').update(fs.readFileSync(stored)).digest('hex')).toBe(sha256);

    const project = fs.realpathSync(path.join(app.dir, 'project'));
    await card.getByLabel('Project folder').fill(project);
    await start.click();
    await page.waitForURL(/#\/session\//);
    const sessionId = decodeURIComponent(/#\/session\/([^/?#]+)/.exec(page.url())![1]!);
    const created = (await readEvents(page, sessionId))[0];
    expect(created).toMatchObject({
      kind: 'session_created',
      projectFolder: project,
      provider: 'local',
      model: path.basename(fileName, '.gguf'),
      local: { path: stored, sha256 },
    });

    // The local model is now the default: settings say so, a fresh page skips first run, and the new-session
    // dialog starts on it (the downloaded model chosen among the files in Keel's home).
    const saved = JSON.parse(fs.readFileSync(path.join(app.home, 'settings.json'), 'utf8')) as {
      defaults: { provider?: string; model?: string };
    };
    expect(saved.defaults).toMatchObject({ provider: 'local', model: entry!.id });
    await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Welcome to Keel' }).count()).toBe(0);
    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Provider').inputValue()).toBe('local');
    await expect.poll(() => dialog.getByLabel('Model').inputValue()).toBe(entry!.id);
    expect(await dialog.getByLabel('Model').textContent()).toContain(fileName);
    expect(await dialog.getByLabel(/Context window/).count()).toBe(0);
    await dialog.getByLabel('Project folder').fill(project);
    await dialog.getByRole('button', { name: 'Create session' }).click();
    await page.waitForURL(
      (url) => !url.hash.includes(encodeURIComponent(sessionId)) && /#\/session\//.test(url.hash),
    );
    const second = decodeURIComponent(/#\/session\/([^/?#]+)/.exec(page.url())![1]!);
    expect((await readEvents(page, second))[0]).toMatchObject({
      kind: 'session_created',
      provider: 'local',
      local: { path: stored, sha256 },
    });
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);
});
