import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { COMPACT_SHAPE, NEEDLE_WORD, VOCABULARY, buildChatSession } from '../conversation.js';
import { makeMetric, median, round } from '../harness.js';
import type { Metric } from '../harness.js';
import { JsonlLog, searchJsonlSessions } from '../peers/jsonlLog.js';
import { importKeelSession, listKeelSessions, openKeelIndex } from '../peers/keelStore.js';
import type { Bench } from './context.js';

/** Plant the needle so a million messages hold about ten of them. */
const NEEDLE_EVERY = 100_000;
const BASE_MS = Date.parse('2025-01-01T00:00:00.000Z');

/** Queries from frequent to rare; the Zipf vocabulary makes rank a proxy for hit count. */
function queries(): { label: string; text: string }[] {
  const word = (rank: number) => VOCABULARY[Math.min(rank, VOCABULARY.length - 1)] ?? 'value';
  return [
    { label: `common word "${word(0)}"`, text: word(0) },
    { label: `mid word "${word(200)}"`, text: word(200) },
    { label: `rare word "${word(2900)}"`, text: word(2900) },
    { label: `needle "${NEEDLE_WORD}"`, text: NEEDLE_WORD },
    { label: `two words "${word(20)} ${word(400)}"`, text: `${word(20)} ${word(400)}` },
  ];
}

/**
 * Full-text search over many messages: the first page of sessions whose messages contain the
 * words. Keel asks index.sqlite's FTS5 table, then reads each listed row's hit from its session's log for
 * the snippet (index.sqlite keeps no message text); the JSONL floor greps every file until it has a page.
 * LangGraph's checkpointer has no search.
 * The fixture is built through Keel's import path (one transaction per session) and timed.
 */
export const ftsSearchBench: Bench = {
  name: 'search',
  title: 'Full-text search over messages',
  run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.fixtureDir('search');
    const home = join(dir, 'keel-home');
    const jsonlDir = join(dir, 'jsonl');
    mkdirSync(jsonlDir, { recursive: true });
    const { ftsMessages, ftsMessagesPerSession: perSession, ftsRunsPerQuery, pageSize } = sizes;
    const sessions = Math.ceil(ftsMessages / perSession);
    const metrics: Metric[] = [];
    const hitCounts: Record<string, number> = {};
    let keelBuildMs = 0;
    const firstRuns: string[] = [];
    try {
      for (let s = 0; s < sessions; s += 1) {
        const id = `chat-${String(s).padStart(5, '0')}`;
        const events = buildChatSession({
          sessionId: id,
          messages: Math.min(perSession, ftsMessages - s * perSession),
          shape: COMPACT_SHAPE,
          seed: 1000 + s,
          messageOffset: s * perSession,
          needleEvery: NEEDLE_EVERY,
          at: new Date(BASE_MS + s * 60_000).toISOString(),
        });
        const t0 = performance.now();
        importKeelSession(home, events, id);
        keelBuildMs += performance.now() - t0;
        const jsonl = JsonlLog.open(join(jsonlDir, `${id}.jsonl`));
        jsonl.appendUnsynced(events);
        jsonl.close();
        if ((s + 1) % 100 === 0) progress(`search: built ${(s + 1) * perSession}/${ftsMessages} messages`);
      }

      const index = openKeelIndex(home);
      try {
        for (const query of queries()) {
          const keelMs: number[] = [];
          const jsonlMs: number[] = [];
          for (let run = 0; run < ftsRunsPerQuery; run += 1) {
            let t0 = performance.now();
            const page = listKeelSessions(index, pageSize, query.text);
            keelMs.push(performance.now() - t0);
            hitCounts[`keelPage:${query.text}`] = page.length;
            t0 = performance.now();
            const jsonlPage = searchJsonlSessions(jsonlDir, query.text, pageSize);
            jsonlMs.push(performance.now() - t0);
            hitCounts[`jsonlPage:${query.text}`] = jsonlPage.length;
          }
          firstRuns.push(`${query.text} ${round(keelMs[0] ?? NaN, 1)} ms`);
          metrics.push(
            makeMetric(`search ${query.label} (median)`, 'ms', 'lower', {
              keel: round(median(keelMs), 3),
              jsonl: round(median(jsonlMs), 3),
              langgraph: null,
            }),
          );
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
        messages: ftsMessages,
        sessions,
        pageSize,
        runsPerQuery: ftsRunsPerQuery,
        keelFixtureBuildMs: round(keelBuildMs, 0),
        keelFixtureMessagesPerSecond: round((ftsMessages * 1000) / keelBuildMs, 0),
        fixturesOnTmpfs: scratch.fixturesOnTmpfs(),
        ...hitCounts,
      },
      metrics,
      notes: [
        `Fixture: ${sessions} sessions of ${perSession} user/assistant messages via SessionLog.importEvents (one transaction per session, FTS rows included): ${(keelBuildMs / 1000).toFixed(1)} s, ${Math.round((ftsMessages * 1000) / keelBuildMs)} messages/s${scratch.fixturesOnTmpfs() ? ' on tmpfs' : ''}.`,
        'JSONL floor: substring scan of every file, stopping once a page of sessions matched (no ranking, no word boundaries).',
        `Keel's first run of each query reads each listed row's hit from its log for the snippet (later runs, like a list re-queried with the same search, find those texts kept): ${firstRuns.join(', ')}.`,
      ],
      skipped: { langgraph: 'SqliteSaver has no full-text search.' },
      durationMs: round(performance.now() - started, 1),
    };
  },
};
