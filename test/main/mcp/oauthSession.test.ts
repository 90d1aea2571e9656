import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { exportSession, loginMcpServer } from '../../../main/core/harness/index.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { type OAuthFixture, startOAuthFixture } from '../../support/oauthServer.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Issue 33: a session's turns use a signed-in HTTP server's grant (refreshed once it expires), and no token is in
// the session's log, its trace, its export or anywhere in the home in the clear (asserted by grep over the bytes),
// nor in what a server that echoes its token says; the box does not see where the grant is kept.
const fixture = useTurnHostFixture('keel-mcp-oauth-session-');
let auth: OAuthFixture;
beforeAll(async () => {
  auth = await startOAuthFixture();
});
afterAll(() => auth.close());

describe('a session on a server that needs OAuth', () => {
  it('calls its tool with the stored grant, refreshes it, and keeps every token out of the log and the export', async () => {
    const allow = `127.0.0.1:${auth.port}`;
    writeMcpSettings(fixture.home, { secure: { url: auth.mcpUrl } });
    await loginMcpServer(fixture.home, 'secure', {
      networkAllow: [allow],
      open: async (url) => {
        const answer = await fetch(url, { redirect: 'manual' });
        await fetch(answer.headers.get('location') ?? '');
      },
    });
    const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write', networkAllow: [allow] });
    const turn = async (text: string, tool = 'mcp__secure__shout') => {
      const args = tool === 'mcp__secure__shout' ? { text } : tool === 'run_command' ? { command: text } : {};
      fixture.server.enqueue(
        { kind: 'reply', text: '', toolCalls: [{ id: 'c1', name: tool, arguments: args }] },
        { kind: 'reply', text: 'done' },
      );
      const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH } });
      expect((await runTurn(host, { prompt: 'go' })).status).toBe('completed');
      await fixture.dispose(host);
    };
    await turn('one');
    auth.expireAccessTokens();
    await turn('two');
    const results = log
      .read()
      .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')
      .map((e) => e.content);
    expect(results).toEqual(['ONE', 'TWO']);
    expect(auth.grants).toEqual(['authorization_code', 'refresh_token']);
    // A server that says the token it was called with: its result reaches the log with the token redacted.
    const lastResult = () =>
      log
        .read()
        .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result')
        .at(-1)?.content;
    await turn('', 'mcp__secure__whoami');
    expect(lastResult()).toMatch(/^you are \[REDACTED:keel:mcp:secure\]/);
    // The box never sees where the grant is kept.
    const kept = path.join(fixture.home, 'mcp-credentials');
    expect(fs.readdirSync(kept).length).toBeGreaterThan(0);
    await turn(`ls ${kept} || echo hidden`, 'run_command');
    expect(lastResult()).toMatch(/No such file or directory\nhidden/);

    let exported = '';
    exportSession(fixture.home, log.id, (chunk) => (exported += chunk));
    const bytes: string[] = [exported];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else bytes.push(fs.readFileSync(full).toString('latin1'));
      }
    };
    walk(fixture.home);
    const everything = bytes.join('\n');
    expect(auth.issued.length).toBeGreaterThanOrEqual(4);
    for (const token of auth.issued) expect(everything.includes(token)).toBe(false);
  }, 60_000);
});
