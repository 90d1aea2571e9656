import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NewEvent } from '../../../main/common/events.js';
import type { ConversationStep } from '../conversation.js';
import { REALISTIC_SHAPE, eventsOfStep, generateConversation, stampEvents } from '../conversation.js';
import { makeMetric, round } from '../harness.js';
import { JsonlLog } from '../peers/jsonlLog.js';
import { createKeelSession } from '../peers/keelStore.js';
import { LangGraphThread } from '../peers/langgraphSaver.js';
import type { Bench } from './context.js';

/** The first `count` events of the realistic conversation, as a flat list. */
function conversationEvents(count: number): NewEvent[] {
  const events: NewEvent[] = [];
  for (const step of generateConversation(Number.MAX_SAFE_INTEGER, REALISTIC_SHAPE, 7)) {
    for (const event of eventsOfStep(step)) {
      if (events.length === count) return events;
      events.push(event);
    }
  }
  return events;
}

/**
 * Batched append throughput: events per second when appends carry `batchSize` events each (one
 * transaction, one fsync per batch) — how fast an import, a subagent result or a burst is stored.
 * LangGraph has no batch append; its closest is one checkpoint per `batchSize` new messages, which
 * rewrites the growing state each time, so its run is capped at fewer messages.
 */
export const appendThroughputBench: Bench = {
  name: 'throughput',
  title: 'Batched append throughput',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('throughput');
    const { batchedEvents, batchSize, langgraphBatchedMessages } = sizes;
    const events = conversationEvents(batchedEvents);
    const batches: NewEvent[][] = [];
    for (let i = 0; i < events.length; i += batchSize) batches.push(events.slice(i, i + batchSize));

    const keel = createKeelSession(join(dir, 'keel-home'), 'throughput-bench');
    let keelMs = 0;
    try {
      const t0 = performance.now();
      for (const batch of batches) keel.append(batch);
      keelMs = performance.now() - t0;
    } finally {
      keel.close();
    }
    progress(`throughput: keel ${events.length} events`);

    const jsonl = JsonlLog.open(join(dir, 'session.jsonl'));
    let jsonlMs = 0;
    try {
      const stamped = batches.map((batch, i) => stampEvents(batch, 1 + i * batchSize));
      const t0 = performance.now();
      for (const batch of stamped) jsonl.append(batch);
      jsonlMs = performance.now() - t0;
    } finally {
      jsonl.close();
    }

    const steps: ConversationStep[] = [...generateConversation(langgraphBatchedMessages, REALISTIC_SHAPE, 7)];
    const langgraph = new LangGraphThread(join(dir, 'langgraph.sqlite'), 'throughput-bench', 'FULL');
    let langgraphMs = 0;
    try {
      const t0 = performance.now();
      for (let i = 0; i < steps.length; i += batchSize)
        await langgraph.putStep(steps.slice(i, i + batchSize));
      langgraphMs = performance.now() - t0;
    } finally {
      langgraph.close();
      scratch.remove(dir);
    }
    progress(`throughput: langgraph ${steps.length} messages`);

    const perSecond = (count: number, ms: number) => round((count * 1000) / ms, 0);
    return {
      name: this.name,
      title: this.title,
      params: {
        batchSize,
        keelEvents: events.length,
        jsonlEvents: events.length,
        langgraphMessages: steps.length,
        synchronous: 'FULL',
      },
      metrics: [
        makeMetric('batched append throughput', 'events/s', 'higher', {
          keel: perSecond(events.length, keelMs),
          jsonl: perSecond(events.length, jsonlMs),
          langgraph: perSecond(steps.length, langgraphMs),
        }),
      ],
      notes: [
        `LangGraph: messages/s over ${steps.length} messages, one checkpoint per ${batchSize} messages (its cost grows with state size).`,
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
