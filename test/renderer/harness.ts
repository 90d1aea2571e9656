import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { buildOnce } from '../support/buildOnce.js';
import { ensureCliBuilt, REPO_ROOT } from '../support/cli.js';
import { startKeel, type KeelProcess } from '../support/keelProcess.js';

/*
 * What every browser test needs: a built renderer and CLI, a `keel serve` child process on a temp home,
 * Debian's Chromium driven by playwright-core (it never downloads a browser), and screenshots under
 * test-results/screenshots/ (git-ignored).
 */

/** Where screenshots and measurements go. */
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
export const SCREENSHOT_DIR = path.join(RESULTS_DIR, 'screenshots');

/** Debian's Chromium (apt `chromium`), the one browser the tests drive. */
export const CHROMIUM = '/usr/bin/chromium';
/** How every test launches it: headless, no sandbox of its own, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** True when the browser the tests drive is installed (apt `chromium`). */
export const HAS_CHROMIUM = fs.existsSync(CHROMIUM);

/** Builds the CLI (dist/) and the renderer (out/renderer) when either is missing or older than its sources. */
export async function ensureBuilt(): Promise<void> {
  await ensureCliBuilt();
  await ensureRendererBuilt();
}

/** Runs `electron-vite build` when out/renderer is missing or older than renderer/ or the contract; one build at a time. */
export async function ensureRendererBuilt(): Promise<void> {
  await buildOnce('renderer', rendererStale, () => {
    const cli = path.join(REPO_ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
    const result = spawnSync(process.execPath, [cli, 'build'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 170_000,
    });
    if (result.status !== 0) {
      throw new Error(`electron-vite build failed:\n${result.stdout}\n${result.stderr}`);
    }
  });
}

function rendererStale(): boolean {
  const built = fs.statSync(path.join(REPO_ROOT, 'out', 'renderer', 'index.html'), { throwIfNoEntry: false });
  if (!built) return true;
  const sources = [
    ...listFiles(path.join(REPO_ROOT, 'renderer')),
    path.join(REPO_ROOT, 'main', 'ipc', 'contract.ts'),
    path.join(REPO_ROOT, 'main', 'core', 'log', 'events.ts'),
  ];
  return sources.some((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > built.mtimeMs);
}

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((entry) =>
      entry.isFile() && !entry.name.endsWith('.md') ? [path.join(entry.parentPath, entry.name)] : [],
    );
}

/** A running `keel serve`: the URL to open (token included), and how to stop it. */
export type Serve = { url: string; process: KeelProcess; stop: () => Promise<void> };

/**
 * Starts `keel serve --port 0` on `home` (or with `args` instead of `--port 0`: none keeps the last run's
 * port and token, issue #37) and reads the printed URL.
 */
export async function startServe(
  home: string,
  env: NodeJS.ProcessEnv = {},
  args: readonly string[] = ['--port', '0'],
): Promise<Serve> {
  const child = startKeel(home, ['serve', ...args], env);
  const pattern = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/;
  await child.waitFor(pattern);
  const url = pattern.exec(child.stdout())?.[0];
  if (!url) throw new Error(`keel serve printed no URL: ${child.stdout()} ${child.stderr()}`);
  return {
    url,
    process: child,
    stop: async () => {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGTERM');
      const ended = await child.done;
      if (ended.code !== 0 && ended.signal === null) {
        throw new Error(`keel serve exited with ${ended.code}: ${ended.stderr}`);
      }
    },
  };
}

/** A Chromium page in a context of its own; close it with `close`. */
export type Browser = { context: BrowserContext; page: Page; close: () => Promise<void> };

/**
 * Opens a fresh browser context (light colour scheme unless asked otherwise) in the run's one headless Chromium
 * (chromiumBroker.ts, Vitest's global setup): no cookies, storage or permissions shared with another context.
 * Without the broker (a config that does not set it up) it launches a Chromium of its own with a fresh profile.
 */
export async function launchBrowser(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<Browser> {
  const look = {
    viewport: { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
  } as const;
  const broker = inject('chromiumBroker');
  if (broker) {
    const answer = await fetch(broker);
    const endpoint = await answer.text();
    if (!answer.ok) throw new Error(endpoint);
    const browser = await chromium.connect(endpoint);
    const context = await browser.newContext(look);
    const page = await context.newPage();
    return {
      context,
      page,
      close: async () => {
        await context.close();
        // Disconnects; the broker's Chromium goes on for the other files.
        await browser.close();
      },
    };
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    ...look,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Writes `test-results/screenshots/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Collects what the page logs as errors and every request that left 127.0.0.1, so tests can assert there were none. */
export function watchPage(page: Page): { errors: string[]; foreignRequests: string[] } {
  const errors: string[] = [];
  const foreignRequests: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // A failed load is reported with its URL below; the console line alone does not say which.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.hostname !== '127.0.0.1' && url.protocol !== 'data:') foreignRequests.push(request.url());
  });
  return { errors, foreignRequests };
}

/** Writes `<home>/settings.json` pointing new sessions at the scripted provider. */
export function writeScriptedSettings(home: string, baseUrl: string): void {
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({
      defaults: { provider: 'openai-compatible', model: 'scripted-model', baseUrl, policy: 'ask' },
      contextWindows: { 'scripted-model': 32000 },
      providers: { 'openai-compatible': { baseUrl } },
    }),
  );
}

/** Appends one measurement to test-results/renderer-measurements.json (keyed by name; the newest run wins). */
export function recordMeasurement(name: string, value: unknown): void {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, 'renderer-measurements.json');
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    all = {};
  }
  all[name] = { ...(value as object), measuredAt: new Date().toISOString() };
  fs.writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`[renderer measurement] ${name}: ${JSON.stringify(value)}`);
}
