import type { Migration } from './database.js';
import { migration as sessions } from './migrations/index/001_sessions.js';
import { migration as messageSearch } from './migrations/index/002_message_search.js';
import { migration as writerLeases } from './migrations/index/003_writer_leases.js';
import { migration as contentlessSearch } from './migrations/index/004_contentless_search.js';
import { migration as events } from './migrations/events/001_events.js';
import { migration as trace } from './migrations/events/002_trace.js';
import { migration as leanIndexes } from './migrations/events/003_lean_indexes.js';
import { migration as eventTrace } from './migrations/events/004_event_trace.js';

export { SPARSE_KINDS_TERM, UNINDEXED_KINDS } from './migrations/events/003_lean_indexes.js';

/** The migrations of `<home>/index.sqlite`, in order. Append new ones; never edit a shipped one. */
export const INDEX_MIGRATIONS: readonly Migration[] = [
  sessions,
  messageSearch,
  writerLeases,
  contentlessSearch,
];

/** The migrations of `<home>/sessions/<id>/events.sqlite`, in order. Append new ones; never edit a shipped one. */
export const EVENTS_MIGRATIONS: readonly Migration[] = [events, trace, leanIndexes, eventTrace];

/**
 * Page size of a new events.sqlite. Appends commit one event at a time and every commit writes whole pages
 * to the WAL: with 512-byte pages an event costs about its own size plus a page or two, not 4 KiB per page
 * touched. (A file made with another size keeps it.)
 */
export const EVENTS_PAGE_SIZE = 512;

/**
 * WAL frames of an events.sqlite before a commit checkpoints them (SQLite's default 1000). Small on purpose:
 * after a checkpoint the next commit starts the WAL again from its beginning, so appends overwrite blocks
 * the file already has, and ext4's fsync of an overwrite needs no journal commit for a new size and new
 * blocks: measured here 0.15 ms against 0.25-0.30 ms for an fsync after an append that grows the file
 * (the JSONL floor's case, and a WAL's until it wraps). 200 frames of 512 bytes (~107 KiB of WAL, ~35
 * appends) wrap within a turn. The cost is in bytes: the last leaf and header pages, rewritten by every
 * append, are copied back once per checkpoint (bench `bytes`: 3.82x the payload, against 3.77x at 4000).
 */
export const EVENTS_WAL_AUTOCHECKPOINT = 200;
