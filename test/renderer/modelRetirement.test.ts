import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { MODEL_CATALOGUE, SUGGESTED_MODEL } from '../../main/providers/catalogue.js';
import { createSession, inDarkTheme, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * Model lifecycle in a browser against keel serve: a session pinned to a retiring (or retired) model warns with
 * the day and switches to the replacement, whose model the next request carries; the new-session dialog badges
 * older models, hides retired ones and shows the provider's list with its age; a model the provider does not
 * serve is refused in its words; an unpriced model's cost reads as unknown. The models are fictional, added
 * through settings.json `models` and dated from the day keel serve's clock reads (the same machine clock, so a
 * run under faketime moves both), never real catalogue entries against the real calendar. The scripted provider
 * speaks Anthropic's messages and models formats.
 */

const DAY_MS = 86_400_000;
const DAYS_LEFT = 12;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
/** The retiring model's days left as of now: a run that crosses midnight (UTC) reads one day fewer than DAYS_LEFT. */
const daysLeft = () => Math.round((Date.parse(retiring.retiresOn) - Date.parse(day(0))) / DAY_MS);
const current = { id: 'claude-test-current', contextWindow: 500_000 };
const retiring = { id: 'claude-test-retiring', retiresOn: day(DAYS_LEFT), replacement: current.id };
const retired = { id: 'claude-test-gone', retiresOn: day(-40), replacement: current.id };
const legacy = { id: 'claude-test-legacy', replacement: current.id };
const FIXTURE_MODELS = {
  [current.id]: { provider: 'anthropic', contextWindow: current.contextWindow, status: 'current' },
  [retiring.id]: {
    provider: 'anthropic',
    contextWindow: 200_000,
    status: 'deprecated',
    retiresOn: retiring.retiresOn,
    replacement: retiring.replacement,
  },
  [retired.id]: {
    provider: 'anthropic',
    contextWindow: 200_000,
    status: 'deprecated',
    retiresOn: retired.retiresOn,
    replacement: retired.replacement,
  },
  [legacy.id]: {
    provider: 'anthropic',
    contextWindow: 200_000,
    status: 'legacy',
    replacement: legacy.replacement,
  },
};

let project: string;

describe.skipIf(!HAS_CHROMIUM)('model retirement and the model switch', () => {
  const app = setUpApp({
    prefix: 'keel-ui-models-',
    serveEnv: { ANTHROPIC_API_KEY: 'test-key' },
    prepare: ({ dir, home, provider }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'README.md'), '# models\n');
      // Anthropic's endpoint is the scripted server, which lists the current, retiring and legacy models.
      const settingsFile = path.join(home, 'settings.json');
      const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(
        settingsFile,
        JSON.stringify({
          ...settings,
          models: FIXTURE_MODELS,
          providers: {
            ...(settings['providers'] as Record<string, unknown>),
            anthropic: { baseUrl: provider.anthropicBaseUrl },
          },
        }),
      );
      provider.servedModels = [{ id: current.id }, { id: retiring.id }, { id: legacy.id }];
    },
  });

  const onAnthropic = (title: string, model: string) => ({
    title,
    projectFolder: project,
    provider: 'anthropic',
    model,
    baseUrl: app.provider.anthropicBaseUrl,
    checkout: 'direct',
  });

  it('warns that the pinned model retires, switches to its replacement, and the next request uses it', async () => {
    const watched = app.watch('model-retiring');
    const page = await app.goto();

    const sessionId = await createSession(page, onAnthropic('Retiring model', retiring.id));
    const warning = page.getByRole('status', { name: 'Model retirement' });
    await warning.waitFor();
    expect(await warning.textContent()).toContain(`${retiring.id} retires on`);
    expect(await warning.textContent()).toContain(`(in ${daysLeft()} days)`);
    expect(await warning.locator('time').getAttribute('datetime')).toBe(retiring.retiresOn);
    await screenshot(page, '40-model-retiring');

    await warning.getByRole('button', { name: `Switch to ${retiring.replacement}…` }).click();
    const dialog = page.getByRole('dialog', { name: 'Switch model' });
    await dialog.waitFor();
    await expect
      .poll(() => dialog.getByLabel('Model', { exact: true }).inputValue())
      .toBe(retiring.replacement);
    const choices = dialog.getByRole('radiogroup', { name: 'Anthropic models' });
    expect(
      await choices.getByRole('radio', { name: new RegExp(`^${retiring.replacement}\\b`) }).isChecked(),
    ).toBe(true);
    // The session keeps its endpoint (the scripted server), shown for the same provider.
    expect(await dialog.getByLabel('Base URL').inputValue()).toBe(app.provider.anthropicBaseUrl);
    await screenshot(page, '41-model-switch-dialog');
    await dialog.getByRole('button', { name: 'Switch model', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });

    // The header follows the log: the new pin, no warning; the transcript marks the switch.
    const header = page.locator('.session-header');
    await header.getByText(retiring.replacement, { exact: true }).waitFor();
    expect(await warning.count()).toBe(0);
    const switched = (await readEvents(page, sessionId)).at(-1);
    expect(switched).toMatchObject({
      kind: 'model_changed',
      provider: 'anthropic',
      model: retiring.replacement,
      baseUrl: app.provider.anthropicBaseUrl,
    });

    const before = app.provider.requests.length;
    app.provider.enqueue({ kind: 'reply', text: 'Answered by the new model.' });
    await sendMessage(page, 'Hello on the new model');
    await page.getByText('Answered by the new model.').waitFor();
    await waitForIdle(page);
    const sent = app.provider.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) {
      expect(request.format).toBe('anthropic');
      expect((request.body as { model: string }).model).toBe(retiring.replacement);
    }
    await screenshot(page, '42-model-switched');
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);

  it('says a retired pinned model fails every request and offers its replacement', async () => {
    const watched = app.watch('model-retired');
    const page = await app.goto();
    // No new session may pin a retired model: this one was made before its model retired (its pin moved
    // there by a model_changed recorded while the model still worked).
    const sessionId = await createSession(page, onAnthropic('Retired model', retiring.id), { open: false });
    const log = SessionLog.open(app.home, sessionId, { write: true });
    try {
      log.append({
        kind: 'model_changed',
        provider: 'anthropic',
        model: retired.id,
        baseUrl: app.provider.anthropicBaseUrl,
        contextWindow: 200_000,
      });
    } finally {
      log.close();
    }
    await page.reload();
    await page.getByRole('option', { name: /Retired model/ }).click();
    await page.getByRole('heading', { name: 'Retired model' }).waitFor();
    const alert = page.getByRole('alert', { name: 'Model retirement' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain(`${retired.id} was retired`);
    expect(await alert.textContent()).toContain('Every request to it fails');
    await alert.getByRole('button', { name: `Switch to ${retired.replacement}…` }).waitFor();
    await screenshot(page, '43-model-retired');
    await inDarkTheme(app.serve.url, async (dark) => {
      await dark.getByRole('option', { name: /Retired model/ }).click();
      await dark.getByRole('alert', { name: 'Model retirement' }).waitFor();
      await screenshot(dark, '43-model-retired-dark');
    });
    expect(watched.errors).toEqual([]);
  }, 60_000);

  it('badges older models in the new-session dialog, hides retired ones and preselects the suggested model', async () => {
    const watched = app.watch('model-choices');
    const page = await app.goto();
    await page.getByRole('button', { name: 'New session' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New session' });
    await dialog.waitFor();
    // Settings' default model is for the scripted (OpenAI-compatible) provider: Anthropic starts on its suggestion.
    await dialog.getByLabel('Provider').selectOption('anthropic');
    const model = dialog.getByLabel('Model', { exact: true });
    // The provider's change fills the model in after the select's own render: polled (the lifecycle pass, beside
    // the crash-safety runs, once read the field still empty).
    await expect.poll(() => model.inputValue()).toBe(SUGGESTED_MODEL.anthropic);

    const choices = dialog.getByRole('radiogroup', { name: 'Anthropic models' });
    const rows = choices.locator('.model-option');
    await expect.poll(() => rows.locator('.model-option-id').allTextContents()).toContain(retiring.id);
    const ids = await rows.locator('.model-option-id').allTextContents();
    expect(ids[0]).toBe(SUGGESTED_MODEL.anthropic);
    expect(ids).not.toContain(retired.id);
    expect(ids).toContain(retiring.id);
    // Current models first, then the older ones.
    const statuses = await Promise.all((await rows.all()).map((row) => row.getAttribute('data-status')));
    const firstOlder = statuses.findIndex((status) => status !== 'current');
    expect(statuses.slice(firstOlder).every((status) => status !== 'current')).toBe(true);
    expect(await choices.getByRole('radio', { name: SUGGESTED_MODEL.anthropic }).isChecked()).toBe(true);
    const retiringRow = rows.filter({
      has: page.locator('.model-option-id', { hasText: new RegExp(`^${retiring.id}$`) }),
    });
    expect(await retiringRow.locator('.model-badge').textContent()).toBe(`retires in ${daysLeft()} days`);
    const legacyRow = rows.filter({
      has: page.locator('.model-option-id', { hasText: new RegExp(`^${legacy.id}$`) }),
    });
    expect(await legacyRow.locator('.model-badge').textContent()).toBe('legacy');
    await retiringRow.scrollIntoViewIfNeeded();
    await screenshot(page, '44-new-session-models');

    // The provider's own list is named with its age (read in the background when the page loaded).
    const source = dialog.getByRole('note', { name: 'Model list source' });
    await expect.poll(() => source.textContent()).toMatch(/^Anthropic lists 3 models · checked just now/);

    // Picking the retiring model says what that means; typing one the provider does not serve is refused in
    // the provider's words before anything is made.
    await retiringRow.locator('input').check();
    await expect.poll(() => model.inputValue()).toBe(retiring.id);
    await dialog.getByText(`${retiring.id} retires in ${daysLeft()} days`).waitFor();
    await dialog.getByLabel('Project folder').fill(project);
    await model.fill(retired.id);
    await dialog.getByRole('button', { name: 'Create session' }).click();
    const refused = dialog.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toBe(
      `Anthropic does not serve ${retired.id} (model: ${retired.id} (404)): choose a model it lists, such as ${current.id}`,
    );
    await screenshot(page, '45-new-session-retired-model');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(watched.errors).toEqual([]);
  }, 60_000);

  it("tests a hosted provider's connection with its suggested (current) model", async () => {
    const watched = app.watch('model-settings');
    const page = await app.goto();
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    for (const [label, kind] of [
      ['Anthropic', 'anthropic'],
      ['OpenAI', 'openai'],
    ] as const) {
      const testModel = page.getByLabel(`Model to test ${label} with`);
      await expect.poll(() => testModel.inputValue()).toBe(SUGGESTED_MODEL[kind]);
      const info = MODEL_CATALOGUE.find((model) => model.id === SUGGESTED_MODEL[kind]);
      expect(info?.status).toBe('current');
    }
    expect(watched.errors).toEqual([]);
  }, 60_000);

  it("shows an unpriced model's cost as unknown (—), never $0", async () => {
    const watched = app.watch('model-unpriced-cost');
    const page = await app.goto();
    // The scripted model is not in the catalogue: Keel has no price for it.
    await createSession(page, { title: 'Unpriced model', projectFolder: project, checkout: 'direct' });
    app.provider.enqueue({ kind: 'reply', text: 'Priced at nothing Keel knows.' });
    await sendMessage(page, 'How much did this cost?');
    await page.getByText('Priced at nothing Keel knows.').waitFor();
    await waitForIdle(page);
    await page.getByRole('button', { name: 'Trace', exact: true }).click();
    const trace = page.getByRole('region', { name: 'Trace and cost' });
    const cost = trace.getByTestId('trace-cost');
    await cost.waitFor();
    await expect.poll(() => cost.textContent()).toBe('—');
    const turnHeader = trace.getByRole('article', { name: 'Turn 1' }).locator('.turn-trace-figures');
    expect(await turnHeader.textContent()).toContain('—');
    expect(await trace.textContent()).not.toContain('$0');
    await screenshot(page, '46-unpriced-cost');
    expect(watched.errors).toEqual([]);
  }, 60_000);
});
