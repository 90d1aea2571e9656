import type { Migration } from '../../database.js';

/**
 * events.sqlite 3: fewer index pages written per append. Every appended event wrote a page of the by-kind
 * index to the WAL, every trace record one of trace_by_turn. Now:
 * - the by-kind index leaves out the kinds of nearly every event of a turn (assistant messages, tool calls
 *   and results): what is looked up by kind (the first user message, the newest instructions, approvals,
 *   compactions, rewinds, commits) is rare. A query by kind must carry the index's WHERE term word for word
 *   (`SPARSE_KINDS_TERM`) for SQLite to use it; a left-out kind is found by scanning (its newest from the end).
 * - the trace has no index by turn: reading one turn's trace (a diagnostic) scans the trace table.
 */
export const migration: Migration = {
  version: 3,
  name: 'lean_indexes',
  up(db) {
    db.exec(`
      DROP INDEX events_by_kind;
      CREATE INDEX events_by_kind ON events (kind, seq)
        WHERE kind NOT IN ('assistant_message', 'tool_call_started', 'tool_result');
      DROP INDEX trace_by_turn;
    `);
  },
};

/** The kinds the by-kind index leaves out. */
export const UNINDEXED_KINDS: readonly string[] = ['assistant_message', 'tool_call_started', 'tool_result'];

/** The by-kind index's WHERE term, as a query must repeat it to be served by the index. */
export const SPARSE_KINDS_TERM = "kind NOT IN ('assistant_message', 'tool_call_started', 'tool_result')";
