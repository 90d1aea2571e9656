import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SessionEvent } from '../../../main/common/events.js';

/**
 * The floor: a session as a JSON-lines file, one event per line, fsync after every append. Nothing
 * durable can be cheaper per event; it has no index, so reads and searches scan everything.
 */
export class JsonlLog {
  private constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  /** Opens (creating) the file for appending; the directory entry is made durable once, here. */
  static open(path: string): JsonlLog {
    const fd = openSync(path, 'a');
    fsyncSync(fd);
    return new JsonlLog(path, fd);
  }

  /** Writes the events as lines in one write and fsyncs; durable when it returns. */
  append(events: readonly SessionEvent[]): void {
    let text = '';
    for (const event of events) text += `${JSON.stringify(event)}\n`;
    writeSync(this.fd, text);
    fsyncSync(this.fd);
  }

  /** Appends without fsync: only for building fixtures, never for a durability measurement. */
  appendUnsynced(events: readonly SessionEvent[]): void {
    let text = '';
    for (const event of events) text += `${JSON.stringify(event)}\n`;
    writeSync(this.fd, text);
  }

  /** Closes the file descriptor. */
  close(): void {
    closeSync(this.fd);
  }
}

/** Reads every event of a JSONL session (JSON.parse only: the floor does not validate). */
export function readJsonlEvents(path: string): SessionEvent[] {
  const text = readFileSync(path, 'utf8');
  const events: SessionEvent[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end === -1) break;
    if (end > start) events.push(JSON.parse(text.slice(start, end)) as SessionEvent);
    start = end + 1;
  }
  return events;
}

/** A listed JSONL session: the id is the file name, the title comes from its first line. */
export type JsonlSessionRow = { id: string; title: string; updatedMs: number };

/**
 * Lists the newest `limit` sessions of a directory of JSONL files the only way a plain file store
 * can: stat every file for its mtime, sort, then read the first line of each file on the page.
 */
export function listJsonlSessions(dir: string, limit: number): JsonlSessionRow[] {
  const stamped = readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => ({ name, updatedMs: statSync(join(dir, name)).mtimeMs }));
  stamped.sort((a, b) => b.updatedMs - a.updatedMs || (a.name < b.name ? -1 : 1));
  return stamped.slice(0, limit).map(({ name, updatedMs }) => {
    const fd = openSync(join(dir, name), 'r');
    try {
      const buffer = Buffer.alloc(4096);
      const read = readSync(fd, buffer);
      const firstLine = buffer.subarray(0, read).toString('utf8').split('\n', 1)[0] ?? '{}';
      const first = JSON.parse(firstLine) as { title?: string };
      return { id: name.slice(0, -'.jsonl'.length), title: first.title ?? '', updatedMs };
    } finally {
      closeSync(fd);
    }
  });
}

/**
 * Finds sessions whose file contains `word` by scanning every file (a grep): the floor for search
 * without an index. Returns at most `limit` session ids, in directory order.
 */
export function searchJsonlSessions(dir: string, word: string, limit: number): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    if (readFileSync(join(dir, name), 'utf8').includes(word)) hits.push(name.slice(0, -'.jsonl'.length));
    if (hits.length >= limit) break;
  }
  return hits;
}
