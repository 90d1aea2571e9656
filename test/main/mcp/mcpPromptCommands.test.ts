import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandPrompt, HarnessError, mcpPromptCommands } from '../../../main/core/harness/index.js';
import { mcpPromptArguments, parseMcpPromptCommandName } from '../../../main/core/mcp/prompts.js';
import { mcpResourceBlock, mcpResourceMentions } from '../../../main/core/mcp/resourceMentions.js';
import type { McpPromptInfo } from '../../../main/mcp/resources.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { type LoopbackMcpServer, startLoopbackMcpServer } from '../../support/mcpHttpServer.js';

// MCP prompts as `/` commands (issues 30, 33): listed with their arguments, expanded through prompts/get,
// against a real Streamable HTTP server on loopback.
let server: LoopbackMcpServer;
let dir: string;
let home: string;
let allow: string[];

beforeAll(async () => {
  server = await startLoopbackMcpServer();
  dir = makeTempDir('keel-mcp-prompt-commands-');
  home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { web: { url: server.url } } } }),
  );
  allow = [`127.0.0.1:${server.port}`];
});
afterAll(async () => {
  await server.close();
  removeTempDir(dir);
});

const review: McpPromptInfo = {
  server: 'web',
  name: 'review',
  arguments: [
    { name: 'file', required: true },
    { name: 'focus', required: false },
  ],
};

describe('MCP prompts as / commands', () => {
  it('reads the typed words as the arguments: by position, by name=value, quoted, or whole for one argument', () => {
    expect(parseMcpPromptCommandName('mcp__web__review')).toEqual({ server: 'web', prompt: 'review' });
    expect(parseMcpPromptCommandName('mcp__web')).toBeUndefined();
    expect(parseMcpPromptCommandName('review')).toBeUndefined();
    expect(mcpPromptArguments(review, 'src/a.ts errors')).toEqual({ file: 'src/a.ts', focus: 'errors' });
    expect(mcpPromptArguments(review, 'focus="error handling" src/a.ts')).toEqual({
      file: 'src/a.ts',
      focus: 'error handling',
    });
    expect(mcpPromptArguments(review, '"my file.ts"')).toEqual({ file: 'my file.ts' });
    expect(() => mcpPromptArguments(review, 'a b c')).toThrow(/too many words.*file, focus/);
    const ask = { server: 'web', name: 'ask', arguments: [{ name: 'question', required: true }] };
    expect(mcpPromptArguments(ask, 'why does the build fail?')).toEqual({
      question: 'why does the build fail?',
    });
    expect(() => mcpPromptArguments({ ...ask, arguments: [] }, 'x')).toThrow(
      '/mcp__web__ask takes no arguments',
    );
  });

  it('lists the servers’ prompts with their arguments and expands one into the message', async () => {
    expect(await mcpPromptCommands({ home, networkAllow: allow })).toEqual([
      {
        name: 'mcp__web__review',
        description: 'Asks for a review of one file. (MCP web)',
        argument: '<file> [focus]',
        source: 'mcp',
      },
    ]);
    // Without the server's host the server does not start: no entries, and no error for the menu.
    expect(await mcpPromptCommands({ home })).toEqual([]);

    const expanded = await expandPrompt({
      home,
      text: '/mcp__web__review src/a.ts focus="error handling"',
      networkAllow: allow,
    });
    expect(expanded).toEqual({ prompt: 'Review src/a.ts for error handling.', notes: [] });

    const missing = expandPrompt({ home, text: '/mcp__web__review', networkAllow: allow });
    await expect(missing).rejects.toThrow(HarnessError);
    await expect(missing).rejects.toThrow('prompt "review" needs file');
    await expect(expandPrompt({ home, text: '/mcp__web__nope x', networkAllow: allow })).rejects.toThrow(
      'MCP server "web" has no prompt "nope" (its prompts: /mcp__web__review)',
    );
    await expect(expandPrompt({ home, text: '/mcp__other__review x', networkAllow: allow })).rejects.toThrow(
      'no MCP server "other" is configured',
    );
  }, 30_000);

  it('attaches an @mcp:server:uri resource: its text in the message, recorded by server and uri', async () => {
    const mentions = mcpResourceMentions(
      'see @mcp:web:file:///docs/readme.md and @mcp:web:note://a, @mcp:web:note://a.',
    );
    expect(mentions).toEqual([
      { server: 'web', uri: 'file:///docs/readme.md' },
      { server: 'web', uri: 'note://a' },
    ]);
    const expanded = await expandPrompt({
      home,
      text: 'Summarize @mcp:web:file:///docs/readme.md',
      networkAllow: allow,
    });
    expect(expanded.prompt).toBe(
      'Summarize @mcp:web:file:///docs/readme.md\n\n' +
        '<mcp-resource server="web" uri="file:///docs/readme.md">\n# Layout\nsrc/ holds the code.\n\n</mcp-resource>',
    );
    await expect(expandPrompt({ home, text: 'x @mcp:gone:file:///a', networkAllow: allow })).rejects.toThrow(
      'no MCP server "gone" is configured',
    );
    // A binary content is named, not inlined.
    expect(
      mcpResourceBlock('web', 'img://a', {
        contents: [{ uri: 'img://a', mimeType: 'image/png', blob: 'AAAA' }],
      }),
    ).toContain(
      '[binary contents img://a (image/png, about 3 bytes): not inlined; read it with read_mcp_resource]',
    );
  }, 30_000);
});
