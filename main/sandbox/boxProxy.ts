import { lookup } from 'node:dns/promises';
import { chmod } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { ProxyEndpoint } from './boxCommon.js';

/** One allow/refuse decision of the proxy, kept for diagnostics ("which hosts did this command try?"). */
export interface ProxyDecision {
  host: string;
  port: number;
  allowed: boolean;
  reason: string;
}

/** A running allowlist proxy. `close` stops listening and cuts every open tunnel. */
export interface AllowlistProxy {
  endpoint: ProxyEndpoint;
  /** The most recent decisions, newest last (bounded). */
  decisions: ProxyDecision[];
  close(): Promise<void>;
}

/** Options of the allowlist proxy. */
export interface AllowlistProxyOptions {
  /** Host names, `*.suffix` wildcards (subdomains only), each optionally with `:port`. */
  allow: string[];
  /** hosts-file style pinning: a name here resolves to this IP instead of through DNS. */
  hosts?: Record<string, string>;
  /** A Unix socket path (Linux box) or a loopback port, 0 for any free port (macOS). */
  listen: { socketPath: string } | { port: number };
}

const MAX_DECISIONS = 200;

/**
 * Starts an HTTP proxy (CONNECT tunnels and absolute-form plain HTTP) that forwards only to hosts on
 * the allowlist and answers 403 for everything else. Names resolving to loopback or link-local addresses
 * are refused unless pinned in `hosts`, so an allowlisted name cannot be pointed at the user's machine.
 */
export async function startAllowlistProxy(options: AllowlistProxyOptions): Promise<AllowlistProxy> {
  const allow = options.allow.map(parseAllowEntry);
  const hosts = new Map(Object.entries(options.hosts ?? {}).map(([name, ip]) => [normalizeHost(name), ip]));
  const decisions: ProxyDecision[] = [];
  const open = new Set<Duplex>();

  const decide = async (host: string, port: number): Promise<{ address: string } | { refused: string }> => {
    const record = (allowed: boolean, reason: string): void => {
      decisions.push({ host, port, allowed, reason });
      if (decisions.length > MAX_DECISIONS) decisions.shift();
    };
    if (!isHostAllowed(allow, host, port)) {
      const reason = `${host}:${port} is not on the network allowlist`;
      record(false, reason);
      return { refused: reason };
    }
    const pinned = hosts.get(host);
    let address = pinned;
    if (address === undefined) {
      try {
        address = (await lookup(host)).address;
      } catch {
        record(false, `${host} does not resolve`);
        return { refused: `${host} does not resolve` };
      }
      if (isLocalAddress(address)) {
        const reason = `${host} resolves to the local address ${address}`;
        record(false, reason);
        return { refused: reason };
      }
    }
    record(true, pinned === undefined ? 'allowlisted' : `allowlisted, pinned to ${pinned}`);
    return { address };
  };

  const server = http.createServer((request, response) => {
    void (async () => {
      let target: URL;
      try {
        target = new URL(request.url ?? '');
      } catch {
        response
          .writeHead(400, { 'content-type': 'text/plain' })
          .end('Keel proxy: use an absolute http:// URL.\n');
        return;
      }
      if (target.protocol !== 'http:') {
        response
          .writeHead(400, { 'content-type': 'text/plain' })
          .end('Keel proxy: only http:// is proxied here.\n');
        return;
      }
      const host = normalizeHost(target.hostname);
      const port = Number(target.port || 80);
      const verdict = await decide(host, port);
      if ('refused' in verdict) {
        response
          .writeHead(403, { 'content-type': 'text/plain' })
          .end(`Keel blocked this request: ${verdict.refused}.\n`);
        return;
      }
      const headers = { ...request.headers };
      for (const name of Object.keys(headers)) if (name.startsWith('proxy-')) delete headers[name];
      const upstream = http.request(
        {
          host: verdict.address,
          port,
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers,
        },
        (upstreamResponse) => {
          response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          upstreamResponse.pipe(response);
        },
      );
      upstream.on('error', (error) => {
        if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(`Keel proxy could not reach ${host}:${port}: ${error.message}\n`);
      });
      request.pipe(upstream);
    })();
  });

  server.on('connect', (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    void (async () => {
      const parsed = parseAuthority(request.url ?? '');
      if (parsed === null) {
        client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
        return;
      }
      const verdict = await decide(parsed.host, parsed.port);
      if ('refused' in verdict) {
        const body = `Keel blocked this connection: ${verdict.refused}.\n`;
        client.end(
          `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
            `Connection: close\r\n\r\n${body}`,
        );
        return;
      }
      const upstream = net.connect(parsed.port, verdict.address);
      open.add(upstream);
      upstream.on('close', () => open.delete(upstream));
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (error) => {
        if (client.writable && upstream.connecting) {
          client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`);
        } else {
          client.destroy();
        }
      });
    })();
  });
  server.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('socketPath' in options.listen) server.listen(options.listen.socketPath, resolve);
    else server.listen(options.listen.port, '127.0.0.1', resolve);
  });
  let endpoint: ProxyEndpoint;
  if ('socketPath' in options.listen) {
    await chmod(options.listen.socketPath, 0o600);
    endpoint = { socketPath: options.listen.socketPath };
  } else {
    const address = server.address();
    endpoint = { port: typeof address === 'object' && address !== null ? address.port : options.listen.port };
  }

  return {
    endpoint,
    decisions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

type AllowEntry = { host: string; wildcard: boolean; port: number | null };

/** True when `host:port` matches an allowlist entry (exact host, or a subdomain of a `*.` entry). */
export function isHostAllowed(allow: AllowEntry[] | string[], host: string, port: number): boolean {
  const entries = allow.map((entry) => (typeof entry === 'string' ? parseAllowEntry(entry) : entry));
  const name = normalizeHost(host);
  return entries.some((entry) => {
    if (entry.port !== null && entry.port !== port) return false;
    return entry.wildcard ? name.endsWith(`.${entry.host}`) : name === entry.host;
  });
}

function parseAllowEntry(entry: string): AllowEntry {
  const match = /^(\*\.)?(\[[^\]]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(entry.trim());
  if (match === null) {
    throw new Error(`"${entry}" is not a network allowlist entry; write host, *.domain or host:port.`);
  }
  const port = match[3] === undefined ? null : Number(match[3]);
  return { wildcard: match[1] !== undefined, host: normalizeHost(match[2] ?? ''), port };
}

function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(?:\[([^\]]+)\]|([^:/\s]+))(?::(\d{1,5}))?$/.exec(authority.trim());
  if (match === null) return null;
  const port = match[3] === undefined ? 443 : Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: normalizeHost(match[1] ?? match[2] ?? ''), port };
}

function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** Loopback, link-local (cloud metadata) and unspecified addresses: never reachable through the proxy by DNS. */
function isLocalAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (net.isIPv4(v4)) {
    return v4.startsWith('127.') || v4.startsWith('169.254.') || v4 === '0.0.0.0';
  }
  const lower = address.toLowerCase();
  return lower === '::1' || lower === '::' || lower.startsWith('fe80:');
}
