import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_MAX_MESSAGE_BYTES, WS_PATH, WsRequest, type WsMessage } from '../ipc/contract.js';
import { buildContentSecurityPolicy } from '../ipc/csp.js';
import { contentTypeOf, resolveStaticFile } from './staticFiles.js';
import type { Handlers } from '../ipc/handlers.js';

/** The only address `keel serve` listens on: never reachable from another machine. */
export const SERVE_HOST = '127.0.0.1';

/** The cookie that lets the page's own asset requests through once the tokened URL was opened. */
export const TOKEN_COOKIE = 'keel_token';

/** Options of `startKeelServer`. */
export type KeelServerOptions = {
  handlers: Handlers;
  /** The built renderer (out/renderer): index.html and its assets. */
  rendererDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Tests may fix it; default 32 random bytes, base64url. */
  token?: string;
  /** Said on the page a browser gets without the token: where this server's token is kept (keel serve's). */
  tokenHelp?: string;
  /**
   * How long what a connection owns (terminals, output flows) outlives it, so a page that reconnects with the
   * same client id (the bridge's `?client=`) keeps its terminals. Default 5 s.
   */
  reconnectGraceMs?: number;
};

/** Default of KeelServerOptions.reconnectGraceMs. */
export const RECONNECT_GRACE_MS = 5_000;

const CLIENT_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** A running `keel serve`. */
export type KeelServer = {
  /** The URL to open, token included: `http://127.0.0.1:PORT/?token=...`. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Closes every WebSocket (releasing what each connection owned: its terminals die) and the listener; the handlers are the caller's. */
  close(): Promise<void>;
};

/** True when both strings are equal, compared in constant time. */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/**
 * Checks one request for the token (`?token=` or the cookie), a Host naming this very listener (DNS
 * rebinding) and an Origin, if any, equal to our own (cross-site pages). Returns the refusal, or undefined.
 */
export function checkRequest(
  request: Pick<http.IncomingMessage, 'headers' | 'url'>,
  expected: { token: string; port: number },
): { status: 401 | 403; reason: string } | undefined {
  const own = [`${SERVE_HOST}:${expected.port}`, `localhost:${expected.port}`];
  const host = request.headers.host;
  if (host === undefined || !own.includes(host)) {
    return { status: 403, reason: 'this server only answers requests addressed to 127.0.0.1' };
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !own.some((hostPort) => origin === `http://${hostPort}`)) {
    return { status: 403, reason: `requests from ${origin} are refused` };
  }
  const url = new URL(request.url ?? '/', `http://${host}`);
  const token = url.searchParams.get('token') ?? cookieValue(request.headers.cookie, TOKEN_COOKIE);
  if (!sameSecret(token ?? undefined, expected.token)) {
    return { status: 401, reason: 'open the URL keel serve printed: it carries the access token' };
  }
  return undefined;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * Issue #37: the page a browser gets without the token (or with one this server does not take): how to get
 * the URL that carries it. Plain HTML: no script, so it works under the CSP and without the app.
 */
export function missingTokenPage(port: number, tokenHelp: string | undefined): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Keel: open the URL keel serve printed</title></head>
<body style="font: 15px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1 style="font-size: 1.3rem">This page needs keel serve's access token</h1>
<p>Keel serves this app to your browser only with the token in the URL it prints, so that other pages and
programs on this machine cannot use it. This page was opened without it, or with a token this server does not
take (it was replaced with <code>keel serve --new-token</code>).</p>
<p>In the terminal where <code>keel serve</code> runs, open the URL it printed:
<code>http://${SERVE_HOST}:${port}/?token=…</code>. Not running? Start it with <code>keel serve</code>: it
prints the URL.</p>
${
  tokenHelp
    ? `<p>${escapeHtml(tokenHelp)}</p>
`
    : ''
}</body></html>
`;
}

/**
 * Serves the built renderer over HTTP and the handler table over a WebSocket on 127.0.0.1 only. Every
 * request and upgrade needs the per-launch token (the printed URL carries it; the page then holds it as an
 * HttpOnly SameSite=Strict cookie), a Host of this listener and no foreign Origin.
 */
export async function startKeelServer(options: KeelServerOptions): Promise<KeelServer> {
  const token = options.token ?? crypto.randomBytes(32).toString('base64url');
  const rendererDir = path.resolve(options.rendererDir);
  const { handlers } = options;
  let port = 0;
  const sockets = new Set<Socket>();
  const clients = trackClients(handlers, options.reconnectGraceMs ?? RECONNECT_GRACE_MS);

  const headersFor = (): Record<string, string> => ({
    'content-security-policy': buildContentSecurityPolicy({
      connectSources: [`ws://${SERVE_HOST}:${port}`, `ws://localhost:${port}`],
    }),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=()',
  });

  const server = http.createServer((request, response) => {
    const refusal = checkRequest(request, { token, port });
    if (refusal) {
      // A person opening the page without its token reads how to get one; scripts keep the plain line.
      const page = refusal.status === 401 && (request.headers.accept ?? '').includes('text/html');
      response.writeHead(refusal.status, {
        'content-type': `${page ? 'text/html' : 'text/plain'}; charset=utf-8`,
        'cache-control': 'no-store',
        ...headersFor(),
      });
      response.end(page ? missingTokenPage(port, options.tokenHelp) : `${refusal.reason}\n`);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', ...headersFor() });
      response.end();
      return;
    }
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
    const file = resolveStaticFile(rendererDir, url.pathname);
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...headersFor() });
      response.end(
        url.pathname === '/'
          ? `the renderer is not built (no ${path.join(rendererDir, 'index.html')}): run npm run build\n`
          : 'not found\n',
      );
      return;
    }
    const headers: Record<string, string> = {
      ...headersFor(),
      'content-type': contentTypeOf(file),
      'cache-control': file.endsWith('.html') ? 'no-store' : 'private, max-age=3600',
    };
    if (url.searchParams.has('token')) {
      headers['set-cookie'] = `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    }
    response.writeHead(200, headers);
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    fs.createReadStream(file)
      .on('error', () => response.destroy())
      .pipe(response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_MESSAGE_BYTES });
  server.on('upgrade', (request, socket, head) => {
    const refusal = checkRequest(request, { token, port });
    const pathname = new URL(request.url ?? '/', 'http://x').pathname;
    if (refusal || pathname !== WS_PATH) {
      const status = refusal
        ? `${refusal.status} ${refusal.status === 401 ? 'Unauthorized' : 'Forbidden'}`
        : '404 Not Found';
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const asked = new URL(request.url ?? '/', 'http://x').searchParams.get('client');
    const client = `ws-${asked !== null && CLIENT_ID.test(asked) ? asked : crypto.randomUUID()}`;
    wss.handleUpgrade(request, socket, head, (ws) => serveClient(ws, handlers, client, clients));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, SERVE_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://${SERVE_HOST}:${port}/?token=${token}`,
    port,
    token,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await clients.releaseAll();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type ClientTracker = {
  /** A socket of `client` opened: a pending release of that client is cancelled. */
  joined(client: string): void;
  /** A socket of `client` closed: once it has none left for the grace period, the handlers release it. */
  left(client: string): void;
  /** Releases every client now (server close) and waits until their terminals are gone. */
  releaseAll(): Promise<void>;
};

/** Counts each client's live sockets and releases a client (Handlers.disconnect) a grace period after its last one. */
function trackClients(handlers: Handlers, graceMs: number): ClientTracker {
  const live = new Map<string, number>();
  const pending = new Map<string, NodeJS.Timeout>();
  const releasing = new Set<Promise<void>>();
  let closed = false;
  const release = (client: string) => {
    pending.delete(client);
    const done = handlers.disconnect(client).catch(() => undefined);
    releasing.add(done);
    void done.finally(() => releasing.delete(done));
  };
  return {
    joined(client) {
      clearTimeout(pending.get(client));
      pending.delete(client);
      live.set(client, (live.get(client) ?? 0) + 1);
    },
    left(client) {
      if (closed) return;
      const count = (live.get(client) ?? 1) - 1;
      if (count > 0) {
        live.set(client, count);
        return;
      }
      live.delete(client);
      const timer = setTimeout(() => release(client), graceMs);
      timer.unref();
      pending.set(client, timer);
    },
    async releaseAll() {
      closed = true;
      for (const [client, timer] of [...pending]) {
        clearTimeout(timer);
        release(client);
      }
      for (const client of [...live.keys()]) release(client);
      live.clear();
      await Promise.all([...releasing]);
    },
  };
}

/**
 * One browser connection: calls in, results and every pushed event out, as `client` of the handlers: what it
 * owns (command-output flows, interactive terminals) is released when its last socket is gone for the grace period.
 */
function serveClient(ws: WebSocket, handlers: Handlers, client: string, clients: ClientTracker): void {
  clients.joined(client);
  const send = (message: WsMessage) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  const unsubscribe = handlers.hub.subscribe((push) => send(push));
  let gone = false;
  const leave = () => {
    if (gone) return;
    gone = true;
    unsubscribe();
    clients.left(client);
  };
  ws.on('close', leave);
  ws.on('error', leave);
  ws.on('message', (data, isBinary) => {
    let raw: unknown;
    try {
      raw = isBinary
        ? undefined
        : (JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : '') as unknown);
    } catch {
      raw = undefined;
    }
    const parsed = WsRequest.safeParse(raw);
    if (!parsed.success) {
      ws.close(1003, 'messages are JSON {id, channel, input}');
      return;
    }
    const { id, channel, input } = parsed.data;
    void handlers.invoke(channel, input, client).then((result) => send({ id, result }));
  });
}
