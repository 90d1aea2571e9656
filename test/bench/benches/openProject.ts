import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectPayload } from '../../../main/core/projection/index.js';
import { COMPACT_SHAPE, buildSessionEvents } from '../conversation.js';
import { makeMetric, median, round } from '../harness.js';
import { JsonlLog, readJsonlEvents } from '../peers/jsonlLog.js';
import {
  importKeelSession,
  openAndProjectKeel,
  projectKeelFromEvents,
  timeKeelProjection,
} from '../peers/keelStore.js';
import { LangGraphThread, messagesOfEvents, openLangGraphReader } from '../peers/langgraphSaver.js';
import type { Bench } from './context.js';

/** Events after the compaction in the compacted fixture (what the projection still has to walk). */
const COMPACTION_TAIL = 100;
const CHUNK = 5_000;

/**
 * Open + project a big session, as a resume does before its first request: Keel opens the session
 * read-only, reads the view (compaction in effect + tail) and projects it; the JSONL floor must read
 * and parse every line, then project; LangGraph loads its newest checkpoint (the whole state). Two
 * fixtures of the same size: without compaction, and with a compaction near the end. Warm page
 * cache (the files were just written); median of several runs.
 */
export const openProjectBench: Bench = {
  name: 'project',
  title: 'Open + project a big session',
  async run({ sizes, scratch, progress, system }) {
    const started = performance.now();
    const dir = scratch.dir('project');
    const count = sizes.projectEvents;
    const fixtures = {
      plain: buildSessionEvents({ sessionId: 'big-plain', eventCount: count, shape: COMPACT_SHAPE }),
      compacted: buildSessionEvents({
        sessionId: 'big-compacted',
        eventCount: count,
        shape: COMPACT_SHAPE,
        compactionTail: COMPACTION_TAIL,
      }),
    };
    const home = join(dir, 'keel-home');
    const lgPath = join(dir, 'langgraph.sqlite');
    const build: Record<string, number> = {};
    const timings = {
      plain: { keel: [] as number[], jsonl: [] as number[], langgraph: [] as number[] },
      compacted: { keel: [] as number[], jsonl: [] as number[], langgraph: [] as number[] },
    };
    const keelParts = { openAndViewMs: [] as number[], projectMs: [] as number[], closeMs: [] as number[] };
    const payloadSizes: Record<string, number> = {};
    const origins: Record<string, number> = {};
    const sameAsEvents: Record<string, boolean> = {};
    const lastPayloads: Record<string, string> = {};
    try {
      for (const [name, events] of Object.entries(fixtures)) {
        let t0 = performance.now();
        importKeelSession(home, events, `big-${name}`);
        build[`keelImport${name}Ms`] = round(performance.now() - t0, 0);

        const jsonl = JsonlLog.open(join(dir, `${name}.jsonl`));
        for (let i = 0; i < events.length; i += CHUNK) jsonl.appendUnsynced(events.slice(i, i + CHUNK));
        jsonl.close();

        t0 = performance.now();
        const thread = new LangGraphThread(lgPath, `big-${name}`, 'NORMAL');
        await thread.putMessages(messagesOfEvents(events));
        thread.close();
        build[`langgraphPut${name}Ms`] = round(performance.now() - t0, 0);
        progress(`project: built ${name} fixture (${events.length} events)`);
      }

      const runs = {
        plain: { keel: sizes.projectPlainRuns, langgraph: sizes.langgraphPlainRuns },
        compacted: { keel: sizes.projectRuns, langgraph: sizes.projectRuns },
      };
      for (const name of ['compacted', 'plain'] as const) {
        for (let run = 0; run < runs[name].keel; run += 1) {
          let t0 = performance.now();
          const { payload: keelPayload, origin } = openAndProjectKeel(home, `big-${name}`, system);
          timings[name].keel.push(performance.now() - t0);
          origins[`${name}:${origin}`] = (origins[`${name}:${origin}`] ?? 0) + 1;
          lastPayloads[name] = JSON.stringify(keelPayload);
          if (name === 'compacted') {
            const parts = timeKeelProjection(home, `big-${name}`, system);
            keelParts.openAndViewMs.push(parts.openAndViewMs);
            keelParts.projectMs.push(parts.projectMs);
            keelParts.closeMs.push(parts.closeMs);
          }

          t0 = performance.now();
          const jsonlPayload = projectPayload(readJsonlEvents(join(dir, `${name}.jsonl`)), { system });
          timings[name].jsonl.push(performance.now() - t0);

          payloadSizes[`keel${name}Messages`] = keelPayload.messages.length;
          payloadSizes[`jsonl${name}Messages`] = jsonlPayload.messages.length;
          if (run < runs[name].langgraph) {
            t0 = performance.now();
            const reader = openLangGraphReader(lgPath, `big-${name}`);
            const messages = await reader.load();
            reader.close();
            timings[name].langgraph.push(performance.now() - t0);
            payloadSizes[`langgraph${name}Messages`] = messages.length;
          }
        }
        progress(`project: timed ${name} (${runs[name].keel} runs)`);
      }
      // After the timing: the snapshot is a cache, so what it gave must be what projecting the events gives.
      for (const name of ['compacted', 'plain'] as const) {
        const fromEvents = JSON.stringify(projectKeelFromEvents(home, `big-${name}`, system));
        sameAsEvents[name] = fromEvents === lastPayloads[name];
      }
    } finally {
      scratch.remove(dir);
    }

    const medians = (samples: { keel: number[]; jsonl: number[]; langgraph: number[] }) => ({
      keel: round(median(samples.keel), 3),
      jsonl: round(median(samples.jsonl), 3),
      langgraph: round(median(samples.langgraph), 3),
    });
    const sameAsFloor =
      payloadSizes.keelplainMessages === payloadSizes.jsonlplainMessages &&
      payloadSizes.keelcompactedMessages === payloadSizes.jsonlcompactedMessages;
    return {
      name: this.name,
      title: this.title,
      params: {
        events: count,
        compactionTail: COMPACTION_TAIL,
        compactedRuns: sizes.projectRuns,
        plainRuns: sizes.projectPlainRuns,
        langgraphPlainRuns: sizes.langgraphPlainRuns,
        ...build,
        ...payloadSizes,
      },
      metrics: [
        makeMetric(
          `open + project ${count} events, no compaction (median)`,
          'ms',
          'lower',
          medians(timings.plain),
        ),
        makeMetric(
          `open + project ${count} events, compacted near end (median)`,
          'ms',
          'lower',
          medians(timings.compacted),
        ),
        makeMetric('  of which open + projection up to date (compacted, median)', 'ms', 'lower', {
          keel: round(median(keelParts.openAndViewMs), 3),
        }),
        makeMetric('  of which payload (compacted, median)', 'ms', 'lower', {
          keel: round(median(keelParts.projectMs), 3),
        }),
        makeMetric('  of which close (compacted, median)', 'ms', 'lower', {
          keel: round(median(keelParts.closeMs), 3),
        }),
      ],
      notes: [
        `Keel: the projection came from ${Object.entries(origins)
          .map(([key, n]) => `${key} ×${n}`)
          .join(
            ', ',
          )} (snapshot: projection-snapshot.json beside the log, checked by seq and digests and extended; rebuilt: projected from the view, compaction in effect + tail).`,
        Object.values(sameAsEvents).every(Boolean)
          ? 'Keel: the payload opened from the snapshot is byte-identical to projecting the events.'
          : `WARNING: Keel's payload differs from projecting its events: ${JSON.stringify(sameAsEvents)}.`,
        'JSONL: read + JSON.parse every line + projectPayload (it cannot skip what a compaction replaced).',
        'LangGraph: getTuple on a fresh connection, deserialising the newest checkpoint (its whole state); the compacted thread holds the summary, the first user message and the tail.',
        sameAsFloor
          ? 'Keel and the JSONL floor produced payloads of the same length (same projection).'
          : 'WARNING: Keel and the JSONL floor produced payloads of different lengths.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
