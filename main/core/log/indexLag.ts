import type { SessionIndex, SessionSummary } from '../../store/sessionIndex.js';
import { SessionLog } from './sessionLog.js';

/**
 * How far the index is behind the logs of listed sessions. A writer indexes its turn's events when the turn
 * ends (indexFollower.ts), so a session whose turn is running may have events that its row's counts and the
 * search do not cover yet. Only `running` rows can be behind (a killed writer's row is caught up by
 * `openSessionIndex`), so only their logs are opened (read-only, sharing `index`): a page usually has none.
 * Returns, per session id, the events its log has beyond its row's `lastSeq`; sessions not behind are absent.
 */
export function indexLag(
  home: string,
  index: SessionIndex,
  sessions: readonly SessionSummary[],
): Map<string, number> {
  const lag = new Map<string, number>();
  for (const session of sessions) {
    if (session.status !== 'running') continue;
    let log: SessionLog;
    try {
      log = SessionLog.open(home, session.id, { sharedIndex: index });
    } catch {
      continue; // a log that cannot be opened is not this report's to explain
    }
    try {
      const behind = log.lastSeq() - session.lastSeq;
      if (behind > 0) lag.set(session.id, behind);
    } finally {
      log.close();
    }
  }
  return lag;
}

/**
 * `sessions` with `indexBehind` (indexLag's count) set on those behind, the others as they were: what
 * `keel sessions --json` prints and the app's `sessions.list` answers, so both say it alike.
 */
export function withIndexBehind<S extends SessionSummary>(
  home: string,
  index: SessionIndex,
  sessions: readonly S[],
): (S & { indexBehind?: number })[] {
  const lag = indexLag(home, index, sessions);
  return sessions.map((session) => {
    const behind = lag.get(session.id);
    return behind === undefined ? session : { ...session, indexBehind: behind };
  });
}
