import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_NAMES } from '../../../main/ipc/contract.js';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import { startKeelServer, type KeelServer } from '../../../main/server/server.js';
import { makeTempDir, REPO_ROOT, removeTempDir } from '../../support/cli.js';
import { ProviderServer } from '../../support/providerServer.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../../renderer/harness.js';

/*
 * The browser bridge (renderer/bridge/wsBridge.ts) in Debian's Chromium against a real `keel serve`: the page
 * is a vite build of a one-line entry that installs the bridge, served by the server with its CSP and token.
 */

let dir: string;
let rendererDir: string;
let context: BrowserContext | undefined;
let handlers: Handlers;
let keelServer: KeelServer;
let provider: ProviderServer;
let page: Page;
let violations: string[];

beforeAll(async () => {
  dir = fs.realpathSync(makeTempDir('keel-bridge-'));
  const source = path.join(dir, 'source');
  rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(source);
  fs.writeFileSync(
    path.join(source, 'index.html'),
    '<!doctype html><html><head><title>bridge</title></head><body><script type="module" src="./main.ts"></script></body></html>',
  );
  fs.writeFileSync(
    path.join(source, 'main.ts'),
    `import { installKeelBridge } from ${JSON.stringify(path.join(REPO_ROOT, 'renderer/bridge/wsBridge.ts'))};\n` +
      `installKeelBridge();\n(globalThis as unknown as { keelReady: boolean }).keelReady = true;\n`,
  );
  await build({
    root: source,
    configFile: false,
    logLevel: 'silent',
    build: { outDir: rendererDir, emptyOutDir: true, minify: false },
  });
  context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  removeTempDir(dir);
});

beforeEach(async () => {
  fs.mkdirSync(path.join(dir, 'project'), { recursive: true });
  provider = await new ProviderServer().start();
  handlers = createHandlers({
    home: fs.mkdtempSync(path.join(dir, 'home-')),
    mode: 'serve',
    version: '0.0.1',
    env: { PATH: process.env.PATH },
  });
  keelServer = await startKeelServer({ handlers, rendererDir });
  if (!context) throw new Error('no browser');
  page = await context.newPage();
  violations = [];
  // Console errors (CSP violations land there) and failed responses, except the favicon Chromium asks for.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 404/.test(message.text())) violations.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
      violations.push(`${response.status()} ${response.url()}`);
  });
});

afterEach(async () => {
  await page.close();
  await keelServer.close();
  await handlers.close();
  await provider.close();
});

async function openApp(): Promise<void> {
  const response = await page.goto(keelServer.url);
  expect(response?.status()).toBe(200);
  await page.waitForFunction(() => (globalThis as unknown as { keelReady?: boolean }).keelReady === true);
}

describe('the browser bridge in Chromium', () => {
  it('refuses the page without the token', async () => {
    const response = await page.goto(`http://127.0.0.1:${keelServer.port}/`);
    expect(response?.status()).toBe(401);
  });

  it('gives the page window.keel with exactly one function per channel plus subscribe', async () => {
    await openApp();
    const shape = await page.evaluate(() => {
      const keel = (globalThis as unknown as { keel: Record<string, unknown> }).keel;
      const names: string[] = [];
      for (const [group, value] of Object.entries(keel)) {
        if (typeof value === 'function') names.push(group);
        else
          for (const [method, fn] of Object.entries(value as object))
            names.push(`${group}.${method}:${typeof fn}`);
      }
      return names.sort();
    });
    expect(shape).toEqual([...CHANNEL_NAMES.map((name) => `${name}:function`), 'subscribe'].sort());
    expect(violations).toEqual([]);
  });

  it('runs a turn from the page: create, send, deltas and status pushed back, events paged', async () => {
    await openApp();
    provider.enqueue({ kind: 'reply', text: 'streamed into the browser', delayMs: 5 });
    const result = await page.evaluate(
      async ({ project, baseUrl }) => {
        type Api = {
          sessions: { create(input: unknown): Promise<{ ok: boolean; value: { session: { id: string } } }> };
          turns: { send(input: unknown): Promise<{ ok: boolean }> };
          events: { page(input: unknown): Promise<{ ok: boolean; value: { events: { kind: string }[] } }> };
          subscribe(topic: string, handler: (payload: Record<string, unknown>) => void): () => void;
        };
        const keel = (globalThis as unknown as { keel: Api }).keel;
        const created = await keel.sessions.create({
          projectFolder: project,
          provider: 'openai-compatible',
          baseUrl,
          model: 'scripted-model',
          contextWindow: 8000,
        });
        const sessionId = created.value.session.id;
        const deltas: string[] = [];
        const offDelta = keel.subscribe('turn.delta', (payload) => {
          const delta = payload['delta'] as { type: string; text?: string };
          if (delta.type === 'text') deltas.push(delta.text ?? '');
        });
        const ended = new Promise<Record<string, unknown>>((resolve) => {
          const off = keel.subscribe('session.status', (payload) => {
            if (payload['running'] === false) {
              off();
              resolve(payload);
            }
          });
        });
        const sent = await keel.turns.send({ sessionId, prompt: 'hello browser' });
        const status = await ended;
        offDelta();
        const page = await keel.events.page({ sessionId });
        return { sent: sent.ok, status, text: deltas.join(''), kinds: page.value.events.map((e) => e.kind) };
      },
      { project: path.join(dir, 'project'), baseUrl: provider.openaiBaseUrl },
    );
    expect(result.sent).toBe(true);
    expect(result.status).toMatchObject({ running: false, outcome: { status: 'completed' } });
    expect(result.text).toBe('streamed into the browser');
    expect(result.kinds).toEqual(['session_created', 'user_message', 'assistant_message']);
    expect(violations).toEqual([]);
  });

  it('refuses a call bigger than the server takes in words, and keeps the link (issue #32)', async () => {
    await openApp();
    const answers = await page.evaluate(async () => {
      const keel = (
        globalThis as unknown as {
          keel: {
            turns: {
              send(input: unknown): Promise<{ ok: boolean; error?: { code: string; message: string } }>;
            };
            projects: { recent(): Promise<{ ok: boolean }> };
          };
        }
      ).keel;
      const data = 'A'.repeat(5 * 1024 * 1024);
      const big = await keel.turns.send({
        sessionId: 'none',
        prompt: 'two big files',
        uploads: [
          { name: 'a.txt', data },
          { name: 'b.txt', data },
        ],
      });
      return { big, after: await keel.projects.recent() };
    });
    expect(answers.big).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(answers.big.error?.message).toMatch(
      /^this request is 10\.0 MB and keel serve takes at most 8\.0 MB \(files travel in it\)/,
    );
    expect(answers.after.ok).toBe(true);
  });

  it('answers a call made while the server is gone with an error, and reconnects when it is back', async () => {
    await openApp();
    const call = () =>
      page.evaluate(async () => {
        const keel = (globalThis as unknown as { keel: { projects: { recent(): Promise<{ ok: boolean }> } } })
          .keel;
        return keel.projects.recent();
      });
    expect((await call()).ok).toBe(true);
    const { port, token } = keelServer;
    await keelServer.close();
    expect(await call()).toMatchObject({ ok: false, error: { code: 'internal' } });
    keelServer = await startKeelServer({ handlers, rendererDir, port, token });
    await expect.poll(async () => (await call()).ok, { timeout: 10_000, interval: 200 }).toBe(true);
  });
});
