import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { z } from 'zod';
import { isStdioServer } from '../../common/mcp.js';
import { guardedFetch } from '../../mcp/guardedFetch.js';
import { type CredentialVault, signInAuthProvider, storedAuthProvider } from '../../mcp/oauth.js';
import { readMcpCredentials, writeMcpCredentials } from '../../store/mcpCredentials.js';
import { readSettings } from '../../store/settings.js';
import { McpAdminError } from './errors.js';
import { mcpTokenStore } from './secretStore.js';

/*
 * Signing in to an MCP server that needs OAuth (`keel mcp login`, the app's Sign in), signing out, and the
 * stored grant a session's HTTP server uses. The browser step: the authorization URL is handed to `open` (the
 * app opens the system browser; the CLI prints it) and the answer comes back to a loopback redirect on
 * 127.0.0.1 that lives only for the sign-in, its `state` checked. Tokens are kept encrypted in the home
 * (main/store/mcpCredentials.ts), outside every box, log and export.
 */

const StoredCredentials = z.object({
  client: z
    .object({ client_id: z.string().min(1) })
    .passthrough()
    .optional(),
  // Kept whole: the SDK stamps what it saves (the issuer) and reads the stamps back.
  tokens: z
    .object({ access_token: z.string().min(1), token_type: z.string() })
    .passthrough()
    .optional(),
  tokensSavedAt: z.number().optional(),
  codeVerifier: z.string().optional(),
  revoked: z.boolean().optional(),
});

/** How long a sign-in waits for the browser's redirect. */
const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/** A server's credential vault in the home (encrypted by the host's OS keychain when it handed one in). */
export function credentialVault(home: string, server: string, url: string): CredentialVault {
  const { cipher } = mcpTokenStore(home);
  return {
    // Our own file, still checked: a value of another shape reads as "not signed in".
    load: () => {
      const parsed = StoredCredentials.safeParse(readMcpCredentials(home, server, url, cipher));
      return parsed.success ? parsed.data : undefined;
    },
    save: (credentials) => writeMcpCredentials(home, server, url, credentials, cipher),
  };
}

/** For a session's servers: the stored grant of an HTTP server that has one (a signed-out server gets none). */
export function storedMcpAuth(home: string) {
  return (server: string, url: string): OAuthClientProvider | undefined => {
    const vault = credentialVault(home, server, url);
    return vault.load()?.tokens ? storedAuthProvider(server, vault) : undefined;
  };
}

/**
 * A configured HTTP server's sign-in: `signed_in` (a grant, or an expired access token the stored refresh
 * token renews at the next use), `expired` (expired and nothing to renew it with), `revoked` (the server
 * refused the stored grant), `signed_out` (none: sign in if the server asks for it).
 */
export type McpSignInState = 'signed_in' | 'signed_out' | 'expired' | 'revoked';

export function mcpSignInState(home: string, name: string, now = Date.now()): McpSignInState {
  return signInStateOf(credentialVault(home, name, httpServerUrl(home, name)).load(), now);
}

/** Pure: the sign-in state of stored credentials at `now`. */
export function signInStateOf(
  stored: z.infer<typeof StoredCredentials> | undefined,
  now: number,
): McpSignInState {
  if (!stored?.tokens) return stored?.revoked ? 'revoked' : 'signed_out';
  const lifetime = stored.tokens.expires_in;
  const expired =
    typeof lifetime === 'number' &&
    stored.tokensSavedAt !== undefined &&
    stored.tokensSavedAt + lifetime * 1000 <= now;
  return expired && !stored.tokens.refresh_token ? 'expired' : 'signed_in';
}

/** Forgets a server's grant (and its registered client). */
export function logoutMcpServer(home: string, name: string): void {
  credentialVault(home, name, httpServerUrl(home, name)).save({});
}

/**
 * Signs in to a settings' HTTP server: discovery, registration (or the stored client), PKCE, the browser
 * step through `open`, the code exchanged on the loopback redirect. The server's and the authorization
 * server's hosts must be in `networkAllow`, as in a session.
 */
export async function loginMcpServer(
  home: string,
  name: string,
  options: {
    networkAllow: readonly string[];
    open: (url: URL) => void | Promise<void>;
    timeoutMs?: number;
    /** A client registered with the authorization server beforehand (no dynamic registration then). */
    client?: { clientId: string; clientSecret?: string };
  },
): Promise<'signed_in'> {
  const url = httpServerUrl(home, name);
  // The SDK's auth client: loaded for a sign-in only (every keel command imports this module's door).
  const { auth, extractWWWAuthenticateParams } = await import('@modelcontextprotocol/sdk/client/auth.js');
  const fetchFn = guardedFetch(
    options.networkAllow.length > 0 ? { allow: [...options.networkAllow] } : 'none',
  );
  const state = crypto.randomBytes(16).toString('hex');
  const redirect = await startRedirect(state, options.timeoutMs ?? SIGN_IN_TIMEOUT_MS);
  try {
    const vault = credentialVault(home, name, url);
    // A new sign-in starts from the grant, not over it: old tokens would short-circuit the browser step.
    const { tokens: _old, ...kept } = vault.load() ?? {};
    vault.save(
      options.client
        ? {
            ...kept,
            client: {
              client_id: options.client.clientId,
              ...(options.client.clientSecret ? { client_secret: options.client.clientSecret } : {}),
            },
          }
        : kept,
    );
    // What the server's 401 says (RFC 9728's resource_metadata, which may live anywhere, and the scope it
    // wants) steers discovery and the request, as the SDK's transport does when a request meets a 401.
    const challenge = await challengeOf(url, fetchFn, extractWWWAuthenticateParams);
    const provider = signInAuthProvider(name, vault, redirect.url, options.open, state);
    const first = await auth(provider, { serverUrl: url, fetchFn, ...challenge }).catch(refused(name));
    if (first === 'AUTHORIZED') return 'signed_in';
    const code = await redirect.code;
    const second = await auth(provider, {
      serverUrl: url,
      authorizationCode: code,
      fetchFn,
      ...challenge,
    }).catch(refused(name));
    if (second !== 'AUTHORIZED') throw new McpAdminError(`MCP server "${name}" did not grant access`);
    return 'signed_in';
  } finally {
    redirect.close();
  }
}

/** A sign-in started for a host that shows the URL itself: the authorization URL, then the outcome. */
export type McpSignIn = {
  /** The URL to open in a browser; undefined when the server granted access without one. */
  url: Promise<string | undefined>;
  /** Settles when the browser came back (or the sign-in failed or timed out). */
  done: Promise<'signed_in'>;
};

/**
 * `loginMcpServer` for the app and `keel serve`: the authorization URL is handed back (the Electron host also
 * opens the system browser with it; under `keel serve` the page shows it as a link) while the loopback
 * redirect waits for the browser.
 */
export function startMcpSignIn(
  home: string,
  name: string,
  options: { networkAllow: readonly string[]; timeoutMs?: number },
): McpSignIn {
  let shown!: (url: string | undefined) => void;
  let failed!: (error: unknown) => void;
  const url = new Promise<string | undefined>((resolve, reject) => ((shown = resolve), (failed = reject)));
  const done = loginMcpServer(home, name, { ...options, open: (at) => shown(at.href) });
  done.then(
    () => shown(undefined),
    (error: unknown) => failed(error),
  );
  // Whoever awaits only one of the two never meets an unhandled rejection from the other.
  url.catch(() => undefined);
  done.catch(() => undefined);
  return { url, done };
}

/**
 * An unauthenticated initialize sent to the server: from a 401's WWW-Authenticate, where its protected-resource
 * metadata is and the scope it asks for (nothing when it answers otherwise or cannot be reached: discovery
 * then tries the well-known locations).
 */
async function challengeOf(
  url: string,
  fetchFn: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
  extract: (res: Response) => { resourceMetadataUrl?: URL; scope?: string },
): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const answer = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'Keel', version: '0' },
        },
      }),
    });
    await answer.body?.cancel().catch(() => undefined);
    if (answer.status !== 401) return {};
    const { resourceMetadataUrl, scope } = extract(answer);
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  } catch {
    return {};
  }
}

const refused = (name: string) => (error: unknown) => {
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  throw new McpAdminError(`signing in to MCP server "${name}" failed: ${message}`);
};

function httpServerUrl(home: string, name: string): string {
  const config = readSettings(home).mcp.servers[name];
  if (!config) throw new McpAdminError(`no MCP server "${name}" is configured (keel mcp list shows them)`);
  if (isStdioServer(config))
    throw new McpAdminError(`MCP server "${name}" runs as a command: only --url servers sign in`);
  return config.url;
}

/** The loopback redirect of one sign-in: its URL, the code it receives (state checked), and its end. */
async function startRedirect(
  state: string,
  timeoutMs: number,
): Promise<{ url: string; code: Promise<string>; close: () => void }> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // Never an unhandled rejection when the sign-in ends another way.
  code.catch(() => undefined);
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    if (query.get('state') !== state) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('This sign-in link is not the one Keel started.');
      return;
    }
    const error = query.get('error');
    const received = query.get('code');
    res
      .writeHead(error || !received ? 400 : 200, { 'content-type': 'text/plain' })
      .end(
        error || !received
          ? 'Sign-in failed; see Keel.'
          : 'Signed in to the MCP server; you can close this tab.',
      );
    if (error || !received)
      settle.reject(
        new McpAdminError(`the authorization server refused: ${error ?? 'no code in the redirect'}`),
      );
    else settle.resolve(received);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const timer = setTimeout(
    () => settle.reject(new McpAdminError('no answer from the browser within the sign-in time')),
    timeoutMs,
  );
  timer.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    code,
    close: () => {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
    },
  };
}
