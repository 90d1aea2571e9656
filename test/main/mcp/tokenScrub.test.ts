import { describe, expect, it } from 'vitest';
import { grantSecrets, scrubSecrets } from '../../../main/mcp/tokenScrub.js';

// Issue 33: a signed-in server's tokens out of what it says (the session-level proof, with a server echoing its
// token: oauthSession.test.ts).
describe("a server's own tokens out of what it says", () => {
  it('replaces every occurrence in nested strings, keeps other values, and ignores short values', () => {
    const token = 'tok_0123456789abcdef';
    const said = {
      content: [{ type: 'text', text: `a ${token} b ${token}` }],
      structuredContent: { id: token, count: 2, ok: true, nothing: null },
    };
    expect(scrubSecrets(said, [token, 'short'], 'keel:mcp:s')).toEqual({
      content: [{ type: 'text', text: 'a [REDACTED:keel:mcp:s] b [REDACTED:keel:mcp:s]' }],
      structuredContent: { id: '[REDACTED:keel:mcp:s]', count: 2, ok: true, nothing: null },
    });
    expect(scrubSecrets('a short word', ['short'], 'x')).toBe('a short word');
  });

  it("reads the grant's access and refresh tokens as they are now", async () => {
    const held: { tokens?: { access_token: string; token_type: string; refresh_token?: string } } = {};
    const auth = { tokens: () => held.tokens } as unknown as Parameters<typeof grantSecrets>[0];
    expect(await grantSecrets(auth)).toEqual([]);
    held.tokens = { access_token: 'access-1234567', token_type: 'Bearer', refresh_token: 'refresh-1234567' };
    expect(await grantSecrets(auth)).toEqual(['access-1234567', 'refresh-1234567']);
    expect(await grantSecrets(undefined)).toEqual([]);
  });
});
