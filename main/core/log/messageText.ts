import { openReadOnly, type Db } from '../../store/database.js';
import type { MessageText } from '../../store/sessionIndex.js';
import { rowToEvent, searchableText } from './logRows.js';
import type { EventRow } from './logRows.js';
import { isValidSessionId } from './sessionId.js';
import { eventsFile, sessionDir } from '../paths.js';

/** Texts kept between searches at most (their characters): a list re-queried with the same search reads no log. */
const CACHE_CHARS = 2_000_000;

/**
 * Where search reads a hit's text for its snippet (index.sqlite keeps none, index migration 004): the event
 * at `seq` of the session's log, opened read-only (no migration, no lease, no write; a running session can
 * be read) for that one row, ~0.2–0.3 ms (mostly parsing the log's schema). A log that cannot be read gives
 * no text: that row is listed without a snippet, the search itself is unaffected.
 * Texts are kept (newest used first out, up to CACHE_CHARS) by session, seq and the log's last seq as the
 * index row has it: an event's text never changes while its log only grows, and a log cut back (a power cut
 * lost commits the index had seen) and grown again has another last seq by the time the row says so.
 */
export function logMessageText(home: string): MessageText {
  const cache = new Map<string, string>();
  let cachedChars = 0;
  return (sessionId, seq, lastSeq) => {
    const key = `${sessionId}\n${seq}\n${lastSeq}`;
    const cached = cache.get(key);
    if (cached !== undefined) {
      cache.delete(key);
      cache.set(key, cached);
      return cached;
    }
    const text = readMessageText(home, sessionId, seq);
    if (text === undefined || text.length > CACHE_CHARS) return text;
    cache.set(key, text);
    cachedChars += text.length;
    for (const [oldest, value] of cache) {
      if (cachedChars <= CACHE_CHARS) break;
      cache.delete(oldest);
      cachedChars -= value.length;
    }
    return text;
  };
}

function readMessageText(home: string, sessionId: string, seq: number): string | undefined {
  if (!isValidSessionId(sessionId)) return undefined;
  const file = eventsFile(sessionDir(home, sessionId));
  let db: Db | undefined;
  try {
    db = openReadOnly(file);
    const row = db
      .prepare<[number], EventRow>('SELECT seq, kind, at, body FROM events WHERE seq = ?')
      .get(seq);
    return row && searchableText(rowToEvent(sessionId, row, false));
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}
