import path from 'node:path';
import { SessionIndex, type OpenSessionIndexOptions } from '../../store/sessionIndex.js';
import { logMessageText } from './messageText.js';

/*
 * One-line notices about index.sqlite (a damaged file moved aside, progress of a rebuild) for the person
 * using Keel: a host registers where they go (the CLI: stderr); without one they are process warnings.
 */

type NoticeListener = (line: string) => void;

let listener: NoticeListener | undefined;

/** Sends index notices to `fn` from now on (replacing any earlier listener); returns the previous one. */
export function onIndexNotice(fn: NoticeListener | undefined): NoticeListener | undefined {
  const previous = listener;
  listener = fn;
  return previous;
}

/** Reports one line. */
export function indexNotice(line: string): void {
  if (listener) listener(line);
  else process.emitWarning(line, 'KeelIndexNotice');
}

/**
 * `SessionIndex.open` with search snippets read from the session logs (messageText.ts), telling the notice
 * listener when it had to move a damaged file aside.
 */
export function openIndexWithNotice(home: string, options: OpenSessionIndexOptions = {}): SessionIndex {
  const index = SessionIndex.open(home, { messageText: logMessageText(home), ...options });
  if (index.setAside) {
    indexNotice(
      `index.sqlite was damaged (${index.setAside.reason}); moved it to ${path.basename(index.setAside.movedTo)} and rebuilding it from the session logs`,
    );
  }
  return index;
}
