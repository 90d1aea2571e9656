import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import { startKeelServer, type KeelServer } from '../../../main/server/server.js';
import { resolveStaticFile } from '../../../main/server/staticFiles.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { ProviderServer } from '../../support/providerServer.js';

const boxed = (await detectSandbox()).kind !== 'none';

let dir: string;
let rendererDir: string;
let handlers: Handlers;
let keelServer: KeelServer;
let provider: ProviderServer;

beforeEach(async () => {
  dir = fs.realpathSync(makeTempDir('keel-serve-'));
  rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(path.join(rendererDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>Keel</title>');
  fs.writeFileSync(path.join(rendererDir, 'assets', 'app.js'), 'console.log(1);');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside the renderer');
  fs.mkdirSync(path.join(dir, 'project'));
  provider = await new ProviderServer().start();
  handlers = createHandlers({
    home: path.join(dir, 'home'),
    mode: 'serve',
    version: '1.2.3',
    env: { PATH: process.env.PATH },
  });
  keelServer = await startKeelServer({ handlers, rendererDir });
});

afterEach(async () => {
  await keelServer.close();
  await handlers.close();
  await provider.close();
  removeTempDir(dir);
});

type Reply = { status: number; headers: http.IncomingHttpHeaders; body: string };

function get(pathAndQuery: string, headers: Record<string, string> = {}, host = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        host,
        port: keelServer.port,
        path: pathAndQuery,
        headers: { host: `127.0.0.1:${keelServer.port}`, ...headers },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
  });
}

/** Opens a raw ws connection and reports the upgrade's HTTP status, or 101 when it was accepted. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

const wsUrl = (token = keelServer.token) =>
  `ws://127.0.0.1:${keelServer.port}/ws?token=${encodeURIComponent(token)}`;

describe('keel serve over HTTP', () => {
  it('prints a 127.0.0.1 URL carrying the token, and listens on loopback only', async () => {
    expect(keelServer.url).toBe(`http://127.0.0.1:${keelServer.port}/?token=${keelServer.token}`);
    expect(keelServer.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    if (external) {
      const refused = await new Promise<string>((resolve) => {
        const socket = net.connect(keelServer.port, external.address);
        socket.on('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
    }
  });

  it('refuses requests without the token, serves the renderer with it, and remembers it in a strict cookie', async () => {
    expect((await get('/')).status).toBe(401);
    expect((await get('/?token=wrong')).status).toBe(401);
    expect((await get('/assets/app.js')).status).toBe(401);
    const page = await get(`/?token=${keelServer.token}`);
    expect(page.status).toBe(200);
    expect(page.body).toBe('<!doctype html><title>Keel</title>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['set-cookie']).toEqual([
      `keel_token=${keelServer.token}; HttpOnly; SameSite=Strict; Path=/`,
    ]);
    const csp = page.headers['content-security-policy'];
    expect(csp).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
        `connect-src 'self' ws://127.0.0.1:${keelServer.port} ws://localhost:${keelServer.port}; worker-src 'self'; manifest-src 'self'; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; frame-src 'none'; object-src 'none'",
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const asset = await get('/assets/app.js', { cookie: `keel_token=${keelServer.token}` });
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.body).toBe('console.log(1);');
  });

  it('refuses foreign Origins and Hosts (cross-site pages, DNS rebinding), and never serves outside the renderer', async () => {
    const token = `?token=${keelServer.token}`;
    expect((await get(`/${token}`, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await get(`/${token}`, { origin: `http://127.0.0.1:${keelServer.port}` })).status).toBe(200);
    expect((await get(`/${token}`, { host: `evil.example:${keelServer.port}` })).status).toBe(403);
    expect((await get(`/../secret.txt${token}`)).status).toBe(404);
    expect((await get(`/%2e%2e/secret.txt${token}`)).status).toBe(404);
    expect(resolveStaticFile(rendererDir, '/../secret.txt')).toBeUndefined();
    expect(resolveStaticFile(rendererDir, '/%2e%2e%2fsecret.txt')).toBeUndefined();
    expect(resolveStaticFile(rendererDir, '/assets/app.js')).toBe(path.join(rendererDir, 'assets', 'app.js'));
    fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(rendererDir, 'assets', 'link.txt'));
    expect(resolveStaticFile(rendererDir, '/assets/link.txt')).toBeUndefined();
  });
});

describe('keel serve over WebSocket', () => {
  it('refuses upgrades without the token, with a foreign Origin or on another path', async () => {
    expect(await upgradeStatus(wsUrl('nope'))).toBe(401);
    expect(await upgradeStatus(`ws://127.0.0.1:${keelServer.port}/ws`)).toBe(401);
    expect(await upgradeStatus(wsUrl(), { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(`ws://127.0.0.1:${keelServer.port}/other?token=${keelServer.token}`)).toBe(
      404,
    );
    expect(await upgradeStatus(wsUrl(), { origin: `http://127.0.0.1:${keelServer.port}` })).toBe(101);
  });

  it('closes a connection that sends something other than a call', async () => {
    const socket = new WebSocket(wsUrl());
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('open', () => socket.send('not json'));
    expect(await closed).toBe(1003);
  });

  it('answers calls by id and pushes every topic to the connection', async () => {
    const socket = new WebSocket(wsUrl());
    const messages: { id?: number; result?: unknown; topic?: string; payload?: unknown }[] = [];
    const waitFor = (match: (m: (typeof messages)[number]) => boolean) =>
      new Promise<(typeof messages)[number]>((resolve) => {
        const check = () => {
          const found = messages.find(match);
          if (found) resolve(found);
          else setTimeout(check, 10);
        };
        check();
      });
    socket.on('message', (data: Buffer) =>
      messages.push(JSON.parse(data.toString('utf8')) as (typeof messages)[number]),
    );
    await new Promise((resolve) => socket.on('open', resolve));
    socket.send(JSON.stringify({ id: 7, channel: 'projects.recent', input: {} }));
    expect(await waitFor((m) => m.id === 7)).toEqual({
      id: 7,
      result: { ok: true, value: { projects: [] } },
    });
    socket.send(JSON.stringify({ id: 8, channel: 'nope.nothing', input: {} }));
    expect(await waitFor((m) => m.id === 8)).toEqual({
      id: 8,
      result: { ok: false, error: { code: 'not_found', message: 'unknown channel nope.nothing' } },
    });
    socket.send(
      JSON.stringify({
        id: 9,
        channel: 'sessions.create',
        input: {
          projectFolder: path.join(dir, 'project'),
          provider: 'openai-compatible',
          baseUrl: provider.openaiBaseUrl,
          model: 'scripted-model',
          contextWindow: 8000,
        },
      }),
    );
    const created = await waitFor((m) => m.id === 9);
    const id = (created.result as { value: { session: { id: string } } }).value.session.id;
    expect(await waitFor((m) => m.topic === 'sessions.changed')).toEqual({
      topic: 'sessions.changed',
      payload: { sessionId: id, change: 'created' },
    });
    socket.close();
  });

  it.skipIf(!boxed)(
    'owns what a connection opened: its terminal outlives a reconnect, dies when the page is gone, and close waits for the rest',
    async () => {
      await keelServer.close();
      keelServer = await startKeelServer({ handlers, rendererDir, reconnectGraceMs: 150 });
      const open = async (client: string) => {
        const socket = new WebSocket(`${wsUrl()}&client=${client}`);
        const replies = new Map<number, unknown>();
        socket.on('message', (data: Buffer) => {
          const message = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown };
          if (message.id !== undefined) replies.set(message.id, message.result);
        });
        await new Promise((resolve) => socket.on('open', resolve));
        let next = 1;
        const call = async (channel: string, input: unknown) => {
          const id = next++;
          socket.send(JSON.stringify({ id, channel, input }));
          while (!replies.has(id)) await new Promise((resolve) => setTimeout(resolve, 10));
          const result = replies.get(id) as { ok: boolean; value?: unknown; error?: unknown };
          if (!result.ok) throw new Error(JSON.stringify(result.error));
          return result.value as Record<string, unknown>;
        };
        const closed = () =>
          new Promise<void>((resolve) => {
            socket.on('close', () => resolve());
            socket.close();
          });
        return { call, closed };
      };
      const list = async () => {
        const result = await handlers.invoke('terminal.list', {});
        return result.ok
          ? (result.value as { terminals: { terminalId: string }[] }).terminals.map((t) => t.terminalId)
          : [];
      };
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

      const page = await open('page-aaaaaaaa');
      const created = await page.call('sessions.create', {
        projectFolder: path.join(dir, 'project'),
        provider: 'openai-compatible',
        baseUrl: provider.openaiBaseUrl,
        model: 'scripted-model',
        contextWindow: 8000,
      });
      const sessionId = (created['session'] as { id: string }).id;
      const mine = (await page.call('terminal.open', { sessionId }))['terminalId'] as string;
      const other = await open('page-bbbbbbbb');
      const theirs = (await other.call('terminal.open', { sessionId }))['terminalId'] as string;
      expect((await list()).sort()).toEqual([mine, theirs].sort());

      // A dropped connection that comes back with the same client id keeps its terminal.
      await page.closed();
      const back = await open('page-aaaaaaaa');
      await pause(400);
      expect((await list()).sort()).toEqual([mine, theirs].sort());
      expect((await back.call('terminal.list', { sessionId }))['terminals']).toEqual(
        expect.arrayContaining([expect.objectContaining({ terminalId: mine, mine: true })]),
      );

      // A page that is gone for the grace period loses its terminal.
      await back.closed();
      const deadline = Date.now() + 10_000;
      while ((await list()).length > 1 && Date.now() < deadline) await pause(20);
      expect(await list()).toEqual([theirs]);

      await keelServer.close();
      expect(await list()).toEqual([]);
    },
  );
});
