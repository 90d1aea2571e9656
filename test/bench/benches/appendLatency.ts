import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { REALISTIC_SHAPE, eventsOfStep, generateConversation, stampEvents } from '../conversation.js';
import { makeMetric, round, summarize } from '../harness.js';
import { JsonlLog } from '../peers/jsonlLog.js';
import { createKeelSession } from '../peers/keelStore.js';
import { LangGraphThread } from '../peers/langgraphSaver.js';
import type { Bench } from './context.js';

/**
 * Durable single-event append latency. The three peers persist the same conversation step by step,
 * interleaved so machine noise hits them alike: Keel appends each event in its own transaction
 * (synchronous=FULL), the JSONL floor writes each event as a line and fsyncs, LangGraph writes the
 * whole graph state with SqliteSaver.put after every step (also synchronous=FULL). Keel runs turns as the
 * engine does (a user step starts one with setRunning(true); setRunning(false) ends it, indexing the
 * turn's held-back events): the appends are timed alone, the turn ends as their own row.
 */
export const appendLatencyBench: Bench = {
  name: 'append',
  title: 'Durable single-event append latency',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('append');
    const steps = sizes.conversationSteps;
    const keel = createKeelSession(join(dir, 'keel-home'), 'append-bench');
    // events.sqlite at NORMAL (not durable on power loss; see Synchronous in main/store/database.ts), for scale.
    const keelNormal = createKeelSession(join(dir, 'keel-home'), 'append-bench-normal', 'NORMAL');
    const jsonl = JsonlLog.open(join(dir, 'session.jsonl'));
    const langgraph = new LangGraphThread(join(dir, 'langgraph.sqlite'), 'append-bench', 'FULL');
    const samples = {
      keel: [] as number[],
      jsonl: [] as number[],
      langgraph: [] as number[],
      keelNormal: [] as number[],
      turnEnd: [] as number[],
    };
    let running = false;
    let jsonlSeq = 1;
    try {
      jsonl.append(stampEvents([{ kind: 'user_message', content: 'session start' }], jsonlSeq++));
      let done = 0;
      for (const step of generateConversation(steps, REALISTIC_SHAPE)) {
        if (step.kind === 'user') {
          if (running) {
            const t = performance.now();
            keel.endTurn([]);
            samples.turnEnd.push(performance.now() - t);
            keelNormal.endTurn([]);
          }
          keel.startTurn();
          keelNormal.startTurn();
          running = true;
        }
        for (const event of eventsOfStep(step)) {
          const t0 = performance.now();
          keel.append([event]);
          const t1 = performance.now();
          jsonl.append(stampEvents([event], jsonlSeq++));
          const t2 = performance.now();
          keelNormal.append([event]);
          samples.keel.push(t1 - t0);
          samples.jsonl.push(t2 - t1);
          samples.keelNormal.push(performance.now() - t2);
        }
        const t3 = performance.now();
        await langgraph.putStep([step]);
        samples.langgraph.push(performance.now() - t3);
        done += 1;
        if (done % 100 === 0) progress(`append: ${done}/${steps} steps`);
      }
      if (running) {
        const t = performance.now();
        keel.endTurn([]);
        samples.turnEnd.push(performance.now() - t);
        keelNormal.endTurn([]);
      }
    } finally {
      keel.close();
      keelNormal.close();
      jsonl.close();
      langgraph.close();
      scratch.remove(dir);
    }
    const stats = {
      keel: summarize(samples.keel),
      jsonl: summarize(samples.jsonl),
      langgraph: summarize(samples.langgraph),
      keelNormal: summarize(samples.keelNormal),
      turnEnd: summarize(samples.turnEnd),
    };
    const pick = (field: 'p50' | 'p99' | 'mean') => ({
      keel: round(stats.keel[field], 4),
      jsonl: round(stats.jsonl[field], 4),
      langgraph: round(stats.langgraph[field], 4),
    });
    return {
      name: this.name,
      title: this.title,
      params: { steps, keelEvents: stats.keel.n, langgraphPuts: stats.langgraph.n, synchronous: 'FULL' },
      metrics: [
        makeMetric('append latency p50', 'ms', 'lower', pick('p50')),
        makeMetric('append latency p99', 'ms', 'lower', pick('p99')),
        makeMetric('append latency mean', 'ms', 'lower', pick('mean')),
        makeMetric('append latency p50, Keel events.sqlite at NORMAL', 'ms', 'lower', {
          keel: round(stats.keelNormal.p50, 4),
        }),
        makeMetric(
          `turn end p50, Keel (setRunning(false): index row + FTS of the turn's events)`,
          'ms',
          'lower',
          {
            keel: round(stats.turnEnd.p50, 4),
          },
        ),
      ],
      notes: [
        `Keel and JSONL: one sample per event (${stats.keel.n}); LangGraph: one put per step (${stats.langgraph.n}), its cost grows with the conversation.`,
        'During a turn a Keel append of an assistant message, tool call or result commits events.sqlite only (one fsync); the index row and FTS follow at the turn end (the turn-end row); a user message is indexed at once (index.sqlite at NORMAL: no fsync).',
        'The NORMAL row sets synchronous=NORMAL on events.sqlite too (not durable on power loss).',
        "Keel's events WAL wraps every 200 frames (EVENTS_WAL_AUTOCHECKPOINT), so after its first ~35 appends each append's fsync is an overwrite's; the JSONL file grows with every append, as a log file does.",
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
