import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, onTestFailed } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';
import { makeTempDir, removeTempDir } from '../support/cli.js';
import { ProviderServer, withoutEnvironment } from '../support/providerServer.js';
import {
  ensureBuilt,
  launchBrowser,
  screenshot,
  startServe,
  watchPage,
  writeScriptedSettings,
  type Browser,
  type Serve,
} from './harness.js';

/*
 * The world of one browser suite, set up and taken down once per describe block: a temp dir with a Keel home,
 * the scripted provider (settings.json pointing at it), `keel serve` on that home and a Chromium page on it.
 * Plus what the suites do to the app through window.keel: create a session, read its events, send a message.
 */

/** What a suite's world starts with; everything but the temp dir's prefix is optional. */
export type AppFixtureOptions = {
  /** The temp dir's prefix (`keel-ui-<name>-`). */
  prefix: string;
  /** Writes settings.json pointing new sessions at the scripted provider (default true; first run wants none). */
  scriptedSettings?: boolean;
  /** Extra environment of `keel serve` (and of its restarts); `undefined` values unset a variable. */
  serveEnv?: NodeJS.ProcessEnv;
  /** `keel serve`'s options (default `--port 0`: a free port each start; `[]` keeps the last run's). */
  serveArgs?: readonly string[];
  /** `beforeAll` (default) starts keel serve and Chromium with the rest; `test` leaves it to `start()` in a test. */
  startIn?: 'beforeAll' | 'test';
  /** Runs once the provider is up and the settings written, before keel serve starts: project folders, imported logs. */
  prepare?: (app: AppFixture) => void | Promise<void>;
  /** Runs after the browser, keel serve and the provider are stopped, before the temp dir is removed. */
  teardown?: () => void | Promise<void>;
};

/** What a page logged as errors and every request that left 127.0.0.1 (see harness `watchPage`). */
export type PageWatch = ReturnType<typeof watchPage>;

/** A suite's world. `serve`, `browser` and `page` throw (saying why) until keel serve and Chromium run. */
export type AppFixture = {
  readonly dir: string;
  readonly home: string;
  readonly provider: ProviderServer;
  readonly serve: Serve;
  readonly browser: Browser;
  readonly page: Page;
  /** Starts keel serve and Chromium unless they run already; returns the page. */
  start: () => Promise<Page>;
  /**
   * For a test that goes on from an earlier one's app: starts keel serve again if it is gone (a failed test's
   * children are killed with it) and then drops the provider steps it left and opens the app anew; returns
   * the page. One failure stays one.
   */
  reopen: () => Promise<Page>;
  /**
   * Stops keel serve and starts a new one on the same home (with `--port 0`, a new URL; the token is kept
   * unless `extraArgs` has `--new-token`); returns it.
   */
  restartServe: (extraArgs?: readonly string[]) => Promise<Serve>;
  /** Opens the app (keel serve's URL) in the page; returns the page. */
  goto: () => Promise<Page>;
  /** In a test: watches the page for errors and foreign requests, and saves `failed-<name>.png` if the test fails. */
  watch: (name: string) => PageWatch;
};

/**
 * Registers the beforeAll / afterAll hooks of a browser suite (call it inside the suite's describe block, so a
 * skipped suite starts nothing) and returns its world. Teardown closes what was started, in reverse order, and
 * removes the temp dir even when a step fails.
 */
export function setUpApp(options: AppFixtureOptions): AppFixture {
  let dir: string | undefined;
  let provider: ProviderServer | undefined;
  let serve: Serve | undefined;
  let browser: Browser | undefined;
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not running yet: call start() first`);
    return value;
  };
  const app: AppFixture = {
    get dir() {
      return need(dir, 'the suite (its temp dir)');
    },
    get home() {
      return path.join(app.dir, 'home');
    },
    get provider() {
      return need(provider, 'the scripted provider');
    },
    get serve() {
      return need(serve, 'keel serve');
    },
    get browser() {
      return need(browser, 'Chromium');
    },
    get page() {
      return app.browser.page;
    },
    start: async () => {
      const child = serve?.process.child;
      if (child && (child.exitCode !== null || child.signalCode !== null)) serve = undefined;
      serve ??= await startServe(app.home, options.serveEnv, options.serveArgs);
      browser ??= await launchBrowser();
      return browser.page;
    },
    reopen: async () => {
      const before = serve;
      await app.start();
      if (serve !== before) {
        app.provider.discardPending();
        await app.goto();
      }
      return app.page;
    },
    restartServe: async (extraArgs = []) => {
      await serve?.stop();
      serve = undefined;
      serve = await startServe(app.home, options.serveEnv, [
        ...(options.serveArgs ?? ['--port', '0']),
        ...extraArgs,
      ]);
      return serve;
    },
    goto: async () => {
      await app.page.goto(app.serve.url);
      return app.page;
    },
    watch: (name) => {
      const page = app.page;
      onTestFailed(async () => {
        await screenshot(page, `failed-${name}`);
        // CI keeps only its log: what the page showed and what keel serve and the provider saw, printed there.
        const report = await failureReport(app, page, name);
        console.error(report);
        keepFailureReport(report);
      });
      return watchPage(page);
    },
  };

  beforeAll(async () => {
    await ensureBuilt();
    dir = fs.realpathSync(makeTempDir(options.prefix));
    provider = await new ProviderServer().start();
    if (options.scriptedSettings ?? true) writeScriptedSettings(app.home, provider.openaiBaseUrl);
    await options.prepare?.(app);
    if ((options.startIn ?? 'beforeAll') === 'beforeAll') await app.start();
  }, 240_000);

  afterAll(async () => {
    try {
      await browser?.close();
      await serve?.stop();
      await provider?.close();
      await options.teardown?.();
    } finally {
      if (dir) removeTempDir(dir);
    }
  });

  return app;
}

/**
 * Appends a failed test's report to KEEL_FAILURE_REPORTS (.ci/run prints that file again at its end, where a log
 * cut to its tail still shows it), each part on one line. Never throws.
 */
function keepFailureReport(report: string): void {
  const file = process.env.KEEL_FAILURE_REPORTS;
  if (!file) return;
  const compact = report
    .split('\n--- ')
    .map((part) => part.replace(/\n+/g, ' ¶ '))
    .join('\n--- ');
  try {
    fs.appendFileSync(file, `${compact}\n`);
  } catch {
    // The report is on stderr already.
  }
}

/** The last `max` characters of `text`, marked as cut when they are not all of it. */
const tail = (text: string, max: number) => (text.length > max ? `…${text.slice(-max)}` : text);

/**
 * What a failed browser test leaves to read in a CI log: the page's visible text (its end), keel serve's
 * stderr, and each provider request's last message with the scripted steps still queued. Never throws.
 */
async function failureReport(app: AppFixture, page: Page, name: string): Promise<string> {
  const part = async (what: string, read: () => string | Promise<string>) => {
    try {
      return `--- ${what}\n${await read()}`;
    } catch (error) {
      return `--- ${what}: unavailable (${(error as Error).message})`;
    }
  };
  const requests = () =>
    app.provider.requests
      .map((request, i) => {
        const body = request.body as
          { messages?: { role: string }[]; input?: { role: string }[] } | undefined;
        const last = withoutEnvironment(body?.messages ?? body?.input ?? []).at(-1);
        const rejected = request.rejected === undefined ? '' : ` REJECTED ${request.rejected}`;
        return `#${i + 1} ${request.format}${rejected}: ${tail(JSON.stringify(last) ?? '-', 300)}`;
      })
      .concat(`${app.provider.pending} scripted step(s) not taken`)
      .join('\n');
  return [
    `=== failed browser test "${name}"`,
    await part('page text (end)', async () =>
      tail(await page.locator('body').innerText({ timeout: 2_000 }), 3_000),
    ),
    await part('keel serve stderr (end)', () => tail(app.serve.process.stderr(), 3_000)),
    await part('provider requests', requests),
  ].join('\n');
}

/** A session as window.keel.sessions.create takes it; provider and model default to the scripted ones. */
export type NewSession = { title: string; projectFolder: string } & Record<string, unknown>;

/**
 * Creates a session through window.keel (once the app has mounted) and, unless `open` is false, opens it from
 * the list and waits for its heading; returns its id. Fails the test if sessions.create refuses.
 */
export async function createSession(
  page: Page,
  session: NewSession,
  { open = true }: { open?: boolean } = {},
): Promise<string> {
  // window.keel exists once the app has mounted.
  await page.getByRole('button', { name: 'New session' }).first().waitFor();
  const input = { provider: 'openai-compatible', model: 'scripted-model', ...session };
  const created = await page.evaluate<{ ok: boolean; value: { session: { id: string } } }>(
    `window.keel.sessions.create(${JSON.stringify(input)})`,
  );
  // The whole answer, so a refusal shows its error.
  expect(created).toMatchObject({ ok: true });
  if (open) {
    await page.getByRole('option', { name: new RegExp(session.title) }).click();
    await page.getByRole('heading', { name: session.title }).waitFor();
  }
  return created.value.session.id;
}

/** Every event of a session's log (up to 5,000), read through window.keel. */
export async function readEvents(page: Page, sessionId: string): Promise<SessionEvent[]> {
  const result = await page.evaluate<{ ok: boolean; value: { events: SessionEvent[] } }>(
    `window.keel.events.page(${JSON.stringify({ sessionId, fromSeq: 1, limit: 5000 })})`,
  );
  expect(result.ok).toBe(true);
  return result.value.events;
}

/**
 * Types `prompt` into the composer and presses Enter once Send is enabled, as a person would: a turn whose
 * reply is already shown may still be recording its changes (the header says running), and the composer
 * keeps the text until then.
 */
export async function sendMessage(page: Page, prompt: string): Promise<void> {
  const composer = page.getByLabel('Message');
  await composer.fill(prompt);
  await page.getByRole('button', { name: 'Send', exact: true, disabled: false }).waitFor();
  await composer.press('Enter');
  // Taken (the composer empties) or refused (its error shows): an Enter the page dropped fails here, by name,
  // rather than as a reply that never comes.
  const composerError = page.getByRole('form', { name: 'Composer' }).getByRole('alert');
  await expect
    .poll(async () => (await composer.inputValue()) === '' || (await composerError.count()) > 0, {
      message: `the message "${prompt}" was neither sent nor refused`,
      // turns.send answers once the turn holds the session: its checkouts reset, its box ready.
      timeout: 30_000,
    })
    .toBe(true);
}

/** Waits until the open session's header badge says idle (its turn is over). */
export async function waitForIdle(page: Page): Promise<void> {
  await expect.poll(() => page.locator('.session-header .badge').getAttribute('data-status')).toBe('idle');
}

/** Opens `url` in a second Chromium with a dark colour scheme, runs `look` on its page, and closes it. */
export async function inDarkTheme(url: string, look: (page: Page) => Promise<void>): Promise<void> {
  const dark = await launchBrowser({ colorScheme: 'dark' });
  try {
    await dark.page.goto(url);
    await look(dark.page);
  } finally {
    await dark.close();
  }
}
