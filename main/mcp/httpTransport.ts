import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpHttpServer } from '../common/mcp.js';
import { isHostAllowed } from '../sandbox/boxProxy.js';
import type { NetworkPolicy } from '../sandbox/box.js';

/** A transport as a connection sees it: why it ended and the server's stderr, where there is one. */
export type ServerTransport = Transport & { exitReason?: string | undefined; stderrTail?: string };

/** The host and port a URL connects to (default ports by scheme). */
function endpointOf(url: URL): { host: string; port: number } {
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

/** Why the session's network policy refuses `url`, or null when it allows it. */
export function networkRefusal(url: URL, network: NetworkPolicy): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} is not http or https`;
  const { host, port } = endpointOf(url);
  const allow = network === 'none' ? [] : network.allow;
  if (isHostAllowed(allow, host, port)) return null;
  return `${host}:${port} is not on this session's network allowlist (allow it with --allow-host ${host}${url.port ? `:${port}` : ''})`;
}

/**
 * The SDK's Streamable HTTP client transport, held to the session's network policy: the server's host must
 * be on the session's allowlist (a session without one reaches no HTTP server), every request is checked
 * again, and redirects are not followed (a 3xx fails the request instead of leading elsewhere). The
 * configured headers ride on every request and are never recorded.
 */
export function httpTransport(server: McpHttpServer, network: NetworkPolicy): ServerTransport {
  const url = new URL(server.url);
  const refused = networkRefusal(url, network);
  if (refused) throw new Error(refused);
  const guarded = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const target = new URL(input instanceof URL ? input.href : input);
    const problem = networkRefusal(target, network);
    if (problem) return Promise.reject(new Error(problem));
    return fetch(target, { ...init, redirect: 'manual' });
  };
  return new StreamableHTTPClientTransport(url, {
    requestInit: { headers: server.headers },
    fetch: guarded,
  });
}
