import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { REALISTIC_SHAPE, eventsOfStep, generateConversation, stampEvents } from '../conversation.js';
import { createRandom, makeMetric, round, summarize } from '../harness.js';
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
 *
 * Whoever runs first after a LangGraph put finds the caches it evicted (its put serializes the whole state,
 * ~0.6 MB at step 200) and pays for them: a seeded coin per step picks whether Keel or JSONL goes first, so
 * each does about half the time, and the p50 of each position is reported. (Until 2026-12-02 Keel always
 * went first.) Keel at NORMAL appends the step's events after both, never just before Keel: it runs Keel's
 * own code and would warm it.
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
      // By position in the step: the first of the pair runs right after LangGraph's put.
      keelFirst: [] as number[],
      keelSecond: [] as number[],
      jsonlFirst: [] as number[],
      jsonlSecond: [] as number[],
    };
    const coin = createRandom(19);
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
        const events = eventsOfStep(step);
        const keelFirst = coin() < 0.5;
        for (const event of events) {
          const timeKeel = () => {
            const t = performance.now();
            keel.append([event]);
            return performance.now() - t;
          };
          const timeJsonl = () => {
            const t = performance.now();
            jsonl.append(stampEvents([event], jsonlSeq++));
            return performance.now() - t;
          };
          let keelMs: number;
          let jsonlMs: number;
          if (keelFirst) {
            keelMs = timeKeel();
            jsonlMs = timeJsonl();
          } else {
            jsonlMs = timeJsonl();
            keelMs = timeKeel();
          }
          samples.keel.push(keelMs);
          samples.jsonl.push(jsonlMs);
          (keelFirst ? samples.keelFirst : samples.keelSecond).push(keelMs);
          (keelFirst ? samples.jsonlSecond : samples.jsonlFirst).push(jsonlMs);
        }
        for (const event of events) {
          const t = performance.now();
          keelNormal.append([event]);
          samples.keelNormal.push(performance.now() - t);
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
      keelFirst: summarize(samples.keelFirst),
      keelSecond: summarize(samples.keelSecond),
      jsonlFirst: summarize(samples.jsonlFirst),
      jsonlSecond: summarize(samples.jsonlSecond),
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
        makeMetric('append latency p50, first after the LangGraph put', 'ms', 'lower', {
          keel: round(stats.keelFirst.p50, 4),
          jsonl: round(stats.jsonlFirst.p50, 4),
        }),
        makeMetric('append latency p50, second after the LangGraph put', 'ms', 'lower', {
          keel: round(stats.keelSecond.p50, 4),
          jsonl: round(stats.jsonlSecond.p50, 4),
        }),
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
        `A coin per step picks who goes first after the LangGraph put (Keel ${stats.keelFirst.n} events, JSONL ${stats.jsonlFirst.n}): the first pays for the caches the put evicted. The "first"/"second" rows split each peer's samples by position.`,
        'During a turn a Keel append of an assistant message, tool call or result commits events.sqlite only (one fsync); the index row and FTS follow at the turn end (the turn-end row); a user message is indexed at once (index.sqlite at NORMAL: no fsync).',
        'The NORMAL row sets synchronous=NORMAL on events.sqlite too (not durable on power loss).',
        "Keel's events WAL wraps every 200 frames (EVENTS_WAL_AUTOCHECKPOINT), so after its first ~35 appends each append's fsync is an overwrite's; the JSONL file grows with every append, as a log file does.",
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
