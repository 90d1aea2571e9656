import fs from 'node:fs';
import path from 'node:path';
import type { WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createSession, setUpApp } from './appFixture.js';
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

describe.skipIf(!HAS_CHROMIUM)('the turn status in the browser', () => {
  const app = setUpApp({ prefix: 'keel-ui-status-', startIn: 'test' });

  it('keeps a running turn running when an answer of sessions.open asked before it arrives after its push', async () => {
    const page = await app.start();
    const watched = app.watch('turn-status-order');
    // The page's answers to sessions.open, held while `holding` (the frames in the order the server sent them).
    let holding = false;
    const heldIds = new Set<number>();
    const held: string[] = [];
    let toPage: WebSocketRoute | undefined;
    await page.routeWebSocket(/\/ws/, (ws) => {
      const server = ws.connectToServer();
      toPage = ws;
      ws.onMessage((message) => {
        const frame = parse(message);
        if (holding && frame.channel === 'sessions.open' && typeof frame.id === 'number')
          heldIds.add(frame.id);
        server.send(message);
      });
      server.onMessage((message) => {
        const frame = parse(message);
        if (typeof frame.id === 'number' && heldIds.has(frame.id)) held.push(String(message));
        else ws.send(message);
      });
    });
    await app.goto();
    await page.getByRole('heading', { name: 'No session open' }).waitFor();
    const project = path.join(app.dir, 'status-project');
    fs.mkdirSync(project, { recursive: true });
    const sessionId = await createSession(
      page,
      { title: 'Status order', projectFolder: project },
      { open: false },
    );

    // Open the session: its first answer of sessions.open (idle, no turn) is held.
    holding = true;
    await page.getByRole('option', { name: /Status order/ }).click();
    await expect.poll(() => held.length).toBe(1);
    holding = false;
    // A turn starts (the provider answers nothing until the turn is stopped); its running push reaches the page.
    app.provider.enqueue({ kind: 'hang' });
    const sent = await page.evaluate<{ ok: boolean }>(
      `window.keel.turns.send(${JSON.stringify({ sessionId, prompt: 'Take your time.' })})`,
    );
    expect(sent).toMatchObject({ ok: true });
    // Then the old answer (running: false) arrives.
    for (const frame of held.splice(0)) toPage?.send(frame);
    await page.getByRole('heading', { name: 'Status order' }).waitFor();
    await page.getByLabel('Message').waitFor();
    // Two frames: React has committed the answer and run its effects.
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(undefined))))',
    );
    expect(await page.getByRole('button', { name: 'Send', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(watched.errors).toEqual([]);
  });
});
