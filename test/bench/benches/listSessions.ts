import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SessionEvent } from '../../../main/common/events.js';
import { benchSessionInit, stampEvents } from '../conversation.js';
import { makeMetric, median, round } from '../harness.js';
import { JsonlLog, listJsonlSessions } from '../peers/jsonlLog.js';
import { importKeelSession, listKeelSessions, openKeelIndex } from '../peers/keelStore.js';
import type { Bench } from './context.js';

const BASE_MS = Date.parse('2025-01-01T00:00:00.000Z');
/** Sessions imported on the real disk to report what a durable import costs. */
const DISK_SAMPLE = 20;

/** A small session whose last event is `i` minutes after the base time, so list order is by i. */
function smallSession(i: number): SessionEvent[] {
  const id = `list-${String(i).padStart(6, '0')}`;
  const at = new Date(BASE_MS + i * 60_000).toISOString();
  return stampEvents(
    [
      benchSessionInit(id, `Session ${i}: add rate limiting to the api`),
      { kind: 'user_message', content: `add rate limiting to the api (session ${i})` },
      { kind: 'assistant_message', content: 'I will start by reading the router.', toolCalls: [] },
    ],
    1,
    at,
  );
}

/**
 * First page of the session list in a home with many sessions (the app's sidebar on launch). Keel
 * reads one page from index.sqlite; the JSONL floor must stat every file to sort by time, then read
 * the first line of each file on the page. LangGraph's checkpointer has no session index.
 */
export const listSessionsBench: Bench = {
  name: 'list',
  title: 'List the first page of sessions',
  run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.fixtureDir('list');
    const home = join(dir, 'keel-home');
    const jsonlDir = join(dir, 'jsonl');
    const { listSessions: count, pageSize, listRuns } = sizes;
    const keelMs: number[] = [];
    const jsonlMs: number[] = [];
    let keelBuildMs = 0;
    const diskImportMs: number[] = [];
    let pageOk = true;
    try {
      mkdirSync(jsonlDir, { recursive: true });
      for (let i = 0; i < count; i += 1) {
        const events = smallSession(i);
        const id = events[0]?.kind === 'session_created' ? events[0].sessionId : `list-${i}`;
        const t0 = performance.now();
        importKeelSession(home, events, id);
        keelBuildMs += performance.now() - t0;
        const file = join(jsonlDir, `${id}.jsonl`);
        const jsonl = JsonlLog.open(file);
        jsonl.appendUnsynced(events);
        jsonl.close();
        const seconds = (BASE_MS + i * 60_000) / 1000;
        utimesSync(file, seconds, seconds);
        if ((i + 1) % 1000 === 0) progress(`list: built ${i + 1}/${count} sessions`);
      }

      // The same import on the real disk (synchronous=FULL), for the cost of creating a session there.
      const diskHome = join(scratch.dir('list-disk'), 'keel-home');
      for (let i = 0; i < Math.min(DISK_SAMPLE, count); i += 1) {
        const events = smallSession(count + i);
        const t0 = performance.now();
        importKeelSession(diskHome, events, `disk-${i}`);
        diskImportMs.push(performance.now() - t0);
      }

      const index = openKeelIndex(home);
      try {
        for (let run = 0; run < listRuns; run += 1) {
          let t0 = performance.now();
          const keelPage = listKeelSessions(index, pageSize);
          keelMs.push(performance.now() - t0);
          t0 = performance.now();
          const jsonlPage = listJsonlSessions(jsonlDir, pageSize);
          jsonlMs.push(performance.now() - t0);
          pageOk &&= keelPage.length === pageSize && keelPage[0]?.id === jsonlPage[0]?.id;
        }
      } finally {
        index.close();
      }
    } finally {
      scratch.remove(dir);
    }
    return {
      name: this.name,
      title: this.title,
      params: {
        sessions: count,
        pageSize,
        runs: listRuns,
        keelFixtureBuildMs: round(keelBuildMs, 0),
        keelFixtureSessionsPerSecond: round((count * 1000) / keelBuildMs, 0),
        fixturesOnTmpfs: scratch.fixturesOnTmpfs(),
        keelImportOnDiskMedianMs: round(median(diskImportMs), 2),
      },
      metrics: [
        makeMetric(`first page (${pageSize}) of ${count} sessions (median)`, 'ms', 'lower', {
          keel: round(median(keelMs), 3),
          jsonl: round(median(jsonlMs), 3),
          langgraph: null,
        }),
      ],
      notes: [
        `Fixture: ${count} SessionLog.importEvents calls (one per session: its own events.sqlite + index row) took ${(keelBuildMs / 1000).toFixed(1)} s${scratch.fixturesOnTmpfs() ? ' on tmpfs' : ''}; one import on the real disk (FULL) takes ${median(diskImportMs).toFixed(1)} ms (median of ${diskImportMs.length}).`,
        pageOk
          ? 'Both pages start with the newest session.'
          : 'WARNING: the Keel and JSONL pages disagree on the newest session.',
      ],
      skipped: { langgraph: 'SqliteSaver has no session index, titles or times to list by.' },
      durationMs: round(performance.now() - started, 1),
    };
  },
};
