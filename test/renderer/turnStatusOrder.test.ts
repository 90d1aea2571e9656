import fs from 'node:fs';
import path from 'node:path';
import type { Page, WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM } from './harness.js';

/*
 * A session's view learns whether a turn runs from two sources: the session.status push, and the answer of
 * sessions.open it re-reads after events. An answer asked before a push can reach the page in the same frame as the
 * push, and the answer's effect ran last: it undid the push. Asked before a turn started, it showed the session
 * idle while the turn ran (Send enabled, a message refused as busy). Asked during a direct turn's tail (its reply
 * is in, its changes are being recorded), it showed the turn running just after it ended: Send was enabled for one
 * paint and disabled when the effect ran, so an Enter pressed then was dropped: the likeliest way approvals.test.ts
 * timed out on CI, waiting for a reply to a message never sent. Here the page's WebSocket is routed so that an
 * answer of sessions.open is held until the turn's push is through: the first order, made certain. (The second
 * needs the answer released within the 120 ms before the push's own re-read is asked, or useQuery drops it as
 * older; the one counter of pushes serves both.)
 */

type Frame = { id?: number; channel?: string; result?: unknown; topic?: string; payload?: unknown };

const parse = (message: string | Buffer): Frame => {
  try {
    return JSON.parse(String(message)) as Frame;
  } catch {
    return {};
  }
};

/** Control over the page's answers of sessions.open, through a route of its WebSocket to keel serve. */
type OpenAnswers = {
  /** While true, every answer of sessions.open asked from now on is held (kept in the order it came). */
  holding: boolean;
  readonly held: string[];
  /** Sends the held answers to the page, in order. */
  release: () => void;
  /** Once, right after the server's session.status push `matches` is passed to the page: release(). */
  releaseAfterPush: (matches: (payload: { running?: boolean }) => boolean) => void;
  /** Holds nothing and forgets what it held (the next test's start). */
  reset: () => void;
};

async function routeOpenAnswers(page: Page): Promise<OpenAnswers> {
  let toPage: WebSocketRoute | undefined;
  let afterPush: ((payload: { running?: boolean }) => boolean) | undefined;
  const answers: OpenAnswers = {
    holding: false,
    held: [],
    release: () => {
      for (const frame of answers.held.splice(0)) toPage?.send(frame);
    },
    releaseAfterPush: (matches) => {
      afterPush = matches;
    },
    reset: () => {
      answers.holding = false;
      answers.held.length = 0;
      afterPush = undefined;
    },
  };
  await page.routeWebSocket(/\/ws/, (ws) => {
    const server = ws.connectToServer();
    toPage = ws;
    // Request ids are the connection's own (a reloaded page counts from 1 again).
    const heldIds = new Set<number>();
    ws.onMessage((message) => {
      const frame = parse(message);
      if (answers.holding && frame.channel === 'sessions.open' && typeof frame.id === 'number')
        heldIds.add(frame.id);
      server.send(message);
    });
    server.onMessage((message) => {
      const frame = parse(message);
      if (typeof frame.id === 'number' && heldIds.has(frame.id)) {
        answers.held.push(String(message));
        return;
      }
      ws.send(message);
      const payload = (frame.payload ?? {}) as { running?: boolean };
      if (frame.topic === 'session.status' && afterPush?.(payload)) {
        afterPush = undefined;
        // Back to back with the push, as two frames queued behind a busy page arrive.
        answers.release();
      }
    });
  });
  return answers;
}

/** Resolves after two animation frames: React has committed what arrived and run its effects. */
const twoFrames = (page: Page) =>
  page.evaluate(
    'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(undefined))))',
  );

describe.skipIf(!HAS_CHROMIUM)('the turn status in the browser', () => {
  const app = setUpApp({ prefix: 'keel-ui-status-', startIn: 'test' });
  // One route for the page (a page's WebSocket routes are not undone between tests); each test starts it anew.
  let routed: OpenAnswers | undefined;
  const routeFor = async (page: Page) => {
    routed ??= await routeOpenAnswers(page);
    routed.reset();
    return routed;
  };

  /** A new session on an empty folder, not opened; the app open on its start page. */
  async function newSession(page: Page, title: string): Promise<string> {
    const project = path.join(app.dir, `${title.toLowerCase()}-project`);
    fs.mkdirSync(project, { recursive: true });
    return createSession(page, { title, projectFolder: project }, { open: false });
  }

  /** Starts a turn on `sessionId` whose provider answers nothing until it is stopped. */
  async function startHangingTurn(page: Page, sessionId: string): Promise<void> {
    app.provider.enqueue({ kind: 'hang' });
    const sent = await page.evaluate<{ ok: boolean }>(
      `window.keel.turns.send(${JSON.stringify({ sessionId, prompt: 'Take your time.' })})`,
    );
    expect(sent).toMatchObject({ ok: true });
  }

  it('keeps a running turn running when an answer of sessions.open asked before it arrives after its push', async () => {
    const page = await app.start();
    const watched = app.watch('turn-status-started');
    const answers = await routeFor(page);
    await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const sessionId = await newSession(page, 'Started');

    // Open the session: its first answer of sessions.open (idle, no turn) is held.
    answers.holding = true;
    await page.getByRole('option', { name: /^Started,/ }).click();
    await expect.poll(() => answers.held.length).toBeGreaterThan(0);
    answers.holding = false;
    // A turn starts; its running push reaches the page. Then the old answer (running: false) arrives.
    await startHangingTurn(page, sessionId);
    answers.release();
    await page.getByRole('heading', { name: 'Started' }).waitFor();
    await page.getByLabel('Message').waitFor();
    await twoFrames(page);
    expect(await page.getByRole('button', { name: 'Send', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(watched.errors).toEqual([]);
  });

  it('shows a turn that ended as ended when an answer of sessions.open asked while it ran arrives with its push', async () => {
    const page = await app.reopen();
    const watched = app.watch('turn-status-ended');
    const answers = await routeFor(page);
    await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const sessionId = await newSession(page, 'Ended');
    await startHangingTurn(page, sessionId);

    // Open the session while its turn runs: that answer (running: true) is held, and so is every later one
    // (the re-read the end of the turn asks), so nothing mends what the first does.
    answers.holding = true;
    await page.getByRole('option', { name: /^Ended,/ }).click();
    await expect.poll(() => answers.held.length).toBeGreaterThan(0);
    answers.releaseAfterPush((payload) => payload.running === false);
    const stopped = await page.evaluate<{ ok: boolean; value?: { stopped: boolean } }>(
      `window.keel.turns.stop(${JSON.stringify({ sessionId })})`,
    );
    expect(stopped).toMatchObject({ ok: true, value: { stopped: true } });
    await page.getByRole('heading', { name: 'Ended' }).waitFor();
    await page.getByLabel('Message').waitFor();
    await twoFrames(page);
    // Idle: a message typed now is sent (the old effect put Stop back, and Enter did nothing).
    expect(await page.getByRole('button', { name: 'Stop', exact: true }).count()).toBe(0);
    app.provider.enqueue({ kind: 'reply', text: 'Sent after all.' });
    await sendMessage(page, 'Are you there?');
    await page.getByText('Sent after all.').waitFor();
    expect(watched.errors).toEqual([]);
  });
});
