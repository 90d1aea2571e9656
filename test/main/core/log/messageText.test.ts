import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { logMessageText } from '../../../../main/core/log/messageText.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

const tempHome = useTempHomes('keel-message-text-');

describe('logMessageText: a search hit read from its log', () => {
  it('reads the searchable text of the event at a seq, from a log that is still open for writing', () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append({ kind: 'user_message', content: 'add rate limiting' });
    log.append({ kind: 'assistant_message', content: 'done: the limiter is in', toolCalls: [] });
    log.append({ kind: 'compaction', through: 3, summary: 'rate limiting added', pinned: 'goal' });
    const text = logMessageText(home);
    expect(text(log.id, 2, 4)).toBe('add rate limiting');
    expect(text(log.id, 3, 4)).toBe('done: the limiter is in');
    expect(text(log.id, 4, 4)).toBe('rate limiting added');
    // No text: session_created, a seq past the log, an unknown or impossible session id.
    expect(text(log.id, 1, 4)).toBeUndefined();
    expect(text(log.id, 9, 4)).toBeUndefined();
    expect(text('01jzzzzzzzzzzzzzzzzzzzzzzz', 2, 4)).toBeUndefined();
    expect(text('../escape', 2, 4)).toBeUndefined();
    log.close();
  });

  it("keeps what it read by session, seq and the log's last seq: the same page again reads no log", () => {
    const home = tempHome();
    const log = SessionLog.create(home, sessionInit());
    log.append({ kind: 'user_message', content: 'needle here' });
    log.close();
    const text = logMessageText(home);
    expect(text(log.id, 2, 2)).toBe('needle here');
    fs.rmSync(log.dir, { recursive: true });
    expect(text(log.id, 2, 2)).toBe('needle here');
    // The row says the log moved: read again (and here it is gone).
    expect(text(log.id, 2, 3)).toBeUndefined();
  });
});
