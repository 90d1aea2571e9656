import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { startLoopbackMcpServer } from '../../support/mcpHttpServer.js';
import { newSessionArgs } from '../../support/sessionFixture.js';

// `keel run "/mcp__server__prompt …"` and `@mcp:server:uri` in the CLI: the same core expansion as the app's
// and the editor's, against a real Streamable HTTP MCP server on loopback.
const cli = useCliFixture('keel-mcp-prompt-run-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'a.txt'), 'a\n'),
});

describe('keel run with an MCP prompt and an MCP resource', () => {
  it('sends the prompt filled by the server, with the attached resource, refusing a missing argument', async () => {
    const server = await startLoopbackMcpServer();
    try {
      expect(await keel(cli.home, ['mcp', 'add', 'web', '--url', server.url])).toMatchObject({ code: 0 });
      const host = ['--allow-host', `127.0.0.1:${server.port}`];
      const missing = await keel(
        cli.home,
        newSessionArgs(cli, { policy: 'auto-edit', prompt: '/mcp__web__review', extra: host }),
      );
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('prompt "review" needs file');
      expect(cli.server.requests).toHaveLength(0);

      cli.server.enqueue({ kind: 'reply', text: 'Reviewed.' });
      const run = await keel(
        cli.home,
        newSessionArgs(cli, {
          policy: 'auto-edit',
          prompt: '/mcp__web__review a.txt focus=@mcp:web:file:///docs/readme.md',
          extra: host,
        }),
      );
      expect(run.code, run.stderr).toBe(0);
      const sent = JSON.stringify(cli.server.requests.at(-1)?.body);
      expect(sent).toContain('Review a.txt for @mcp:web:file:///docs/readme.md.');
      expect(sent).toContain('<mcp-resource server=\\"web\\" uri=\\"file:///docs/readme.md\\">\\n# Layout');
    } finally {
      await server.close();
    }
  }, 60_000);
});
