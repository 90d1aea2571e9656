import path from 'node:path';
import { openReadOnly, type Db } from '../../store/database.js';
import type { MessageText } from '../../store/sessionIndex.js';
import { rowToEvent, searchableText } from './logRows.js';
import type { EventRow } from './logRows.js';
import { isValidSessionId } from './sessionId.js';

/**
 * Where search reads a hit's text for its snippet (index.sqlite keeps none, index migration 004): the event
 * at `seq` of the session's log, opened read-only (no migration, no lease, no write; a running session can
 * be read) for that one row. A log that cannot be read gives no text: that row is listed without a snippet,
 * the search itself is unaffected.
 */
export function logMessageText(home: string): MessageText {
  return (sessionId, seq) => {
    if (!isValidSessionId(sessionId)) return undefined;
    const file = path.join(home, 'sessions', sessionId, 'events.sqlite');
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
  };
}
