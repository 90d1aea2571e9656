import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/*
 * A real Streamable HTTP MCP server on loopback (the SDK's server API, stateless, JSON responses): one tool
 * (`shout`), two resources (a text file and a templated note) and a prompt with arguments. Tests that reach
 * remote MCP servers point Keel at `url`.
 */

/** A running loopback MCP server; `requests` counts what reached it, `protocolVersions` the versions requests named. */
export type LoopbackMcpServer = {
  url: string;
  port: number;
  requests: number;
  protocolVersions: Set<string>;
  close: () => Promise<void>;
};

export async function startLoopbackMcpServer(): Promise<LoopbackMcpServer> {
  const state = { requests: 0 };
  const protocolVersions = new Set<string>();
  const server = http.createServer((req, res) => {
    state.requests += 1;
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string') protocolVersions.add(version);
    const mcp = new McpServer({ name: 'loopback-fixture', version: '1.0.0' });
    mcp.registerTool(
      'shout',
      {
        description: 'Upper-cases its text.',
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      ({ text }) => Promise.resolve({ content: [{ type: 'text', text: text.toUpperCase() }] }),
    );
    mcp.registerResource(
      'readme',
      'file:///docs/readme.md',
      { title: 'Read me', description: 'How the project is laid out.', mimeType: 'text/markdown' },
      (uri) =>
        Promise.resolve({
          contents: [{ uri: uri.href, mimeType: 'text/markdown', text: '# Layout\nsrc/ holds the code.\n' }],
        }),
    );
    mcp.registerResource(
      'note',
      new ResourceTemplate('note://{name}', { list: undefined }),
      { title: 'A note', description: 'A note by name.' },
      (uri, { name }) => Promise.resolve({ contents: [{ uri: uri.href, text: `note ${String(name)}` }] }),
    );
    mcp.registerPrompt(
      'review',
      {
        title: 'Review a file',
        description: 'Asks for a review of one file.',
        argsSchema: { file: z.string().describe('the file to review'), focus: z.string().optional() },
      },
      ({ file, focus }) =>
        Promise.resolve({
          messages: [
            {
              role: 'user',
              content: { type: 'text', text: `Review ${file}${focus ? ` for ${focus}` : ''}.` },
            },
          ],
        }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    protocolVersions,
    get requests() {
      return state.requests;
    },
    // A client that keeps its connection (a long-lived host's kept servers) does not hold the close up.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
