import { performance } from 'node:perf_hooks';
import type { NewEvent, SessionEvent } from '../../../main/common/events.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import type { TraceEntry } from '../../../main/core/log/sessionLog.js';
import { projectView } from '../../../main/core/projection/index.js';
import type { Payload } from '../../../main/core/projection/index.js';
import { openIndexWithNotice } from '../../../main/core/log/indexNotice.js';
import type { SessionIndex } from '../../../main/store/sessionIndex.js';
import type { SessionSummary } from '../../../main/store/sessionIndex.js';
import { benchSessionInit } from '../conversation.js';

/**
 * Keel's store as the benchmarks drive it: only public API (SessionLog, SessionIndex, projectView),
 * the same calls the turn engine, the CLI and the app make. Every adapter to the real signatures
 * lives here, so the benches never touch SQL of their own.
 */

/** A session opened for writing, with `synchronous` as the log sets it (FULL unless asked). */
export type KeelWriter = {
  readonly id: string;
  /** `<home>/sessions/<id>`: where its events.sqlite is (for the bytes breakdown). */
  readonly dir: string;
  /** One durable append (one transaction) of one or more events, with the trace records made before them. */
  append(events: readonly NewEvent[], trace?: readonly TraceEntry[]): void;
  /** A turn starts (`setRunning(true)`), as the turn engine does before its user message. */
  startTurn(): void;
  /** A turn ends as the engine ends it: its trace not yet written (`appendTrace`), then `setRunning(false)`. */
  endTurn(trace: readonly TraceEntry[]): void;
  close(): void;
};

/** Creates a session (taking its lease) and returns a writer for it. */
export function createKeelSession(
  home: string,
  id: string,
  synchronous: 'FULL' | 'NORMAL' = 'FULL',
): KeelWriter {
  const { kind: _kind, ...init } = benchSessionInit(id, `bench ${id}`);
  const log = SessionLog.create(home, init, { id, synchronous });
  return {
    id: log.id,
    dir: log.dir,
    startTurn: () => log.setRunning(true),
    endTurn(trace) {
      if (trace.length > 0) log.appendTrace(trace);
      log.setRunning(false);
    },
    append(events, trace = []) {
      const result = log.append(events.length === 1 && events[0] ? events[0] : [...events], { trace });
      if (!result.ok) throw new Error(`append conflict in ${log.id}: ${JSON.stringify(result.conflict)}`);
    },
    close: () => log.close(),
  };
}

/** Imports a whole session in one transaction (the fixture bulk path); returns its id. */
export function importKeelSession(home: string, events: readonly SessionEvent[], id: string): string {
  return SessionLog.importEvents(home, [...events], { id });
}

/**
 * What a resume does before its first request: open the session read-only, bring its projection up to date
 * (the snapshot beside the log checked against it and extended, else rebuilt from the view: compaction in
 * effect + tail), take the payload, close. Also says where the projection came from.
 */
export function openAndProjectKeel(
  home: string,
  id: string,
  system: string,
): { payload: Payload; origin: string } {
  const log = SessionLog.open(home, id, { write: false });
  try {
    const payload = log.projection().payload({ system });
    return { payload, origin: log.projectionOrigin?.source ?? 'unknown' };
  } finally {
    log.close();
  }
}

/** The same session projected from its events only (the view read and projected), as before snapshots. */
export function projectKeelFromEvents(home: string, id: string, system: string): Payload {
  const log = SessionLog.open(home, id, { write: false });
  try {
    return projectView(log.projectionView({}), { system });
  } finally {
    log.close();
  }
}

/** The same as openAndProjectKeel, timed in parts: open + bring the projection up to date, payload, close. */
export function timeKeelProjection(
  home: string,
  id: string,
  system: string,
): { openAndViewMs: number; projectMs: number; closeMs: number } {
  const t0 = performance.now();
  const log = SessionLog.open(home, id, { write: false });
  let closed = false;
  try {
    const projection = log.projection();
    const t1 = performance.now();
    projection.payload({ system });
    const t2 = performance.now();
    log.close();
    closed = true;
    return { openAndViewMs: t1 - t0, projectMs: t2 - t1, closeMs: performance.now() - t2 };
  } finally {
    if (!closed) log.close();
  }
}

/** The first page of the session list, as the app's sidebar asks for it. */
export function listKeelSessions(index: SessionIndex, limit: number, search?: string): SessionSummary[] {
  return index.list(search === undefined ? { limit } : { limit, search });
}

/**
 * Opens the home's session index as the app and the CLI do: the list reads only index.sqlite; a search page
 * reads each row's hit from its session's log for the snippet (index.sqlite keeps no message text).
 */
export function openKeelIndex(home: string): SessionIndex {
  return openIndexWithNotice(home);
}
