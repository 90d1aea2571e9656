import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/*
 * A loopback OAuth 2.1 authorization server and the MCP server it protects, on one port, speaking what the
 * MCP authorization spec asks: protected-resource metadata (RFC 9728) named by the 401's WWW-Authenticate,
 * authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591), the authorization code
 * grant with PKCE S256 only, refresh tokens, and revocation (every grant withdrawn at once, for tests).
 */

export type OAuthFixture = {
  base: string;
  port: number;
  mcpUrl: string;
  /** Every access and refresh token issued, in order. */
  issued: string[];
  /** Grant types the token endpoint served, in order. */
  grants: string[];
  /** Ends every access token (refresh tokens stay good). */
  expireAccessTokens(): void;
  /** Withdraws every grant: access and refresh tokens. */
  revokeAll(): void;
  close(): Promise<void>;
};

const b64url = (buffer: Buffer) => buffer.toString('base64url');

type Json = Record<string, unknown>;

export async function startOAuthFixture(): Promise<OAuthFixture> {
  const clients = new Set<string>();
  const codes = new Map<string, { challenge: string; redirect: string }>();
  const access = new Set<string>();
  const refresh = new Set<string>();
  const issued: string[] = [];
  const grants: string[] = [];
  let base = '';
  const token = () => {
    const value = b64url(crypto.randomBytes(24));
    issued.push(value);
    return value;
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const readBody = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => resolve(text));
    });

  const tokenGrant = (form: URLSearchParams): Json | undefined => {
    const grant = form.get('grant_type') ?? '';
    grants.push(grant);
    if (grant === 'authorization_code') {
      const code = form.get('code') ?? '';
      const entry = codes.get(code);
      codes.delete(code);
      const verifier = form.get('code_verifier') ?? '';
      const ok =
        entry !== undefined &&
        entry.redirect === form.get('redirect_uri') &&
        b64url(crypto.createHash('sha256').update(verifier).digest()) === entry.challenge;
      if (!ok) return undefined;
    } else if (grant !== 'refresh_token' || !refresh.has(form.get('refresh_token') ?? '')) {
      return undefined;
    }
    const accessToken = token();
    const refreshToken = token();
    access.add(accessToken);
    refresh.add(refreshToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: refreshToken };
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const body = JSON.parse(await readBody(req)) as Json;
      const id = `client-${clients.size + 1}`;
      clients.add(id);
      return json(res, 201, { ...body, client_id: id, client_id_issued_at: Math.floor(Date.now() / 1000) });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      if (!clients.has(q.get('client_id') ?? '') || q.get('code_challenge_method') !== 'S256')
        return json(res, 400, { error: 'invalid_request' });
      const code = b64url(crypto.randomBytes(16));
      const redirect = q.get('redirect_uri') ?? '';
      codes.set(code, { challenge: q.get('code_challenge') ?? '', redirect });
      const back = new URL(redirect);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const answer = tokenGrant(new URLSearchParams(await readBody(req)));
      return answer ? json(res, 200, answer) : json(res, 400, { error: 'invalid_grant' });
    }
    if (url.pathname === '/mcp') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!bearer || !access.has(bearer)) {
        return res
          .writeHead(401, {
            'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
            'content-type': 'application/json',
          })
          .end(JSON.stringify({ error: 'invalid_token' }));
      }
      const mcp = new McpServer({ name: 'secure-fixture', version: '1.0.0' });
      mcp.registerTool(
        'shout',
        { description: 'Upper-cases its text.', inputSchema: { text: z.string() } },
        ({ text }) => Promise.resolve({ content: [{ type: 'text', text: text.toUpperCase() }] }),
      );
      // A careless server: says the credentials it was called with (Keel must keep them out of its log).
      mcp.registerTool('whoami', { description: 'Says how it was called.' }, () =>
        Promise.resolve({
          content: [{ type: 'text', text: `you are ${bearer}` }],
          structuredContent: { id: bearer },
        }),
      );
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => void transport.close());
      await mcp.connect(transport);
      return transport.handleRequest(req, res);
    }
    return res.writeHead(404).end();
  };

  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    base,
    port,
    mcpUrl: `${base}/mcp`,
    issued,
    grants,
    expireAccessTokens: () => access.clear(),
    revokeAll: () => {
      access.clear();
      refresh.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
