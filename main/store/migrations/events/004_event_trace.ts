import type { Migration } from '../../database.js';

/**
 * events.sqlite 4: the trace rides with the events. A turn's trace records used to be their own rows in
 * `trace`, written in a commit of their own after each model request: that commit rewrote the trace table's
 * last page and the file header, about as many bytes as the request's events. Now the records made before an
 * append (a request's projection, stream and usage stages, a tool's run) are stored, packed (logTrace.ts), in
 * the `trace` column of the first event that append writes: same transaction, no page of their own. What is
 * written with no event (a turn's last records, a compaction's, a fork's) is still a `trace` row, now with
 * `after_seq`, the log's last seq when it was written, so the two are read back in write order. Rows from
 * before this step have no `after_seq`: they were all written before any event carried a trace.
 * No CHECK on the new column: adding one would scan every existing row; the packer writes JSON and the reader
 * rejects anything else.
 */
export const migration: Migration = {
  version: 4,
  name: 'event_trace',
  up(db) {
    db.exec(`
      ALTER TABLE events ADD COLUMN trace TEXT;
      ALTER TABLE trace ADD COLUMN after_seq INTEGER;
    `);
  },
};
