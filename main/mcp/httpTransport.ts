import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpHttpServer } from '../common/mcp.js';
import type { NetworkPolicy } from '../sandbox/box.js';
import { guardedFetch, networkRefusal } from './guardedFetch.js';

/** A transport as a connection sees it: why it ended and the server's stderr, where there is one. */
export type ServerTransport = Transport & { exitReason?: string | undefined; stderrTail?: string };

/**
 * The SDK's Streamable HTTP client transport, held to the session's network policy: the server's host must
 * be on the session's allowlist (a session without one reaches no HTTP server), every request is checked
 * again, and redirects are not followed (a 3xx fails the request instead of leading elsewhere). The
 * configured headers ride on every request and are never recorded.
 */
export function httpTransport(
  server: McpHttpServer,
  network: NetworkPolicy,
  authProvider?: OAuthClientProvider,
): ServerTransport {
  const url = new URL(server.url);
  const refused = networkRefusal(url, network);
  if (refused) throw new Error(refused);
  return new StreamableHTTPClientTransport(url, {
    requestInit: { headers: server.headers },
    fetch: guardedFetch(network),
    // OAuth (discovery, token refresh) goes through the same guarded fetch: the authorization server's host
    // must be on the allowlist too.
    ...(authProvider ? { authProvider } : {}),
  });
}
