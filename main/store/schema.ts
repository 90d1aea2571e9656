import type { Migration } from './database.js';
import { migration as sessions } from './migrations/index/001_sessions.js';
import { migration as messageSearch } from './migrations/index/002_message_search.js';
import { migration as writerLeases } from './migrations/index/003_writer_leases.js';
import { migration as events } from './migrations/events/001_events.js';
import { migration as trace } from './migrations/events/002_trace.js';

/** The migrations of `<home>/index.sqlite`, in order. Append new ones; never edit a shipped one. */
export const INDEX_MIGRATIONS: readonly Migration[] = [sessions, messageSearch, writerLeases];

/** The migrations of `<home>/sessions/<id>/events.sqlite`, in order. Append new ones; never edit a shipped one. */
export const EVENTS_MIGRATIONS: readonly Migration[] = [events, trace];
