import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json: the module is loaded at run time, described by its shape here.
const modulePath = '../../renderer/src/screens/session/liveReply.js';
const { joinStreamed } = (await import(/* @vite-ignore */ modulePath)) as {
  joinStreamed: (snapshot: string, streamed: string) => string;
};

describe('a reply opened mid-stream is shown whole (issue 37)', () => {
  it('joins main’s snapshot with the deltas received since, without losing or repeating text', () => {
    // Deltas since subscribing overlap the snapshot's end.
    expect(joinStreamed('The quick brown', 'brown fox')).toBe('The quick brown fox');
    // Deltas all after the snapshot.
    expect(joinStreamed('The quick ', 'brown fox')).toBe('The quick brown fox');
    // No delta yet.
    expect(joinStreamed('The quick brown', '')).toBe('The quick brown');
    // The page already held the reply from its start: the longer one wins.
    expect(joinStreamed('The quick', 'The quick brown')).toBe('The quick brown');
    expect(joinStreamed('The quick brown', 'The quick')).toBe('The quick brown');
  });
});
