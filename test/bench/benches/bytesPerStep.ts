import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { REALISTIC_SHAPE, eventsOfStep, generateConversation, stampEvents } from '../conversation.js';
import { makeMetric, readWrittenBytes, round } from '../harness.js';
import { JsonlLog } from '../peers/jsonlLog.js';
import { createKeelSession } from '../peers/keelStore.js';
import { LangGraphThread } from '../peers/langgraphSaver.js';
import type { Bench } from './context.js';

type PerStep = { written: number | null; payload: number };

function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Bytes written per step around step N (200 in the full run). Keel appends only the step's new
 * events; LangGraph's SqliteSaver rewrites the whole state (every message so far) per checkpoint.
 * Two measures: bytes handed to write syscalls during the step (Linux /proc/self/io wchar: WAL
 * frames, checkpointed pages, index.sqlite and FTS updates, everything), and payload bytes (the
 * step's event JSON for Keel and JSONL, the stored checkpoint + metadata blob for LangGraph).
 * Averaged over a window of steps centred on N so a WAL checkpoint is amortised, not hit or missed.
 */
export const bytesPerStepBench: Bench = {
  name: 'bytes',
  title: 'Bytes written per step',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('bytes');
    const from = Math.max(1, sizes.bytesAtStep - sizes.bytesWindow + 1);
    const to = sizes.bytesAtStep + sizes.bytesWindow;
    const keel = createKeelSession(join(dir, 'keel-home'), 'bytes-bench');
    const jsonl = JsonlLog.open(join(dir, 'session.jsonl'));
    const langgraph = new LangGraphThread(join(dir, 'langgraph.sqlite'), 'bytes-bench', 'FULL');
    const perStep = { keel: [] as PerStep[], jsonl: [] as PerStep[], langgraph: [] as PerStep[] };
    let jsonlSeq = 1;
    let stateBytesAtN = 0;
    try {
      jsonl.append(stampEvents([{ kind: 'user_message', content: 'session start' }], jsonlSeq++));
      let index = 0;
      for (const step of generateConversation(to, REALISTIC_SHAPE)) {
        index += 1;
        const events = eventsOfStep(step);
        const stamped = stampEvents(events, jsonlSeq);
        jsonlSeq += stamped.length;

        const k0 = readWrittenBytes();
        // The turn engine appends a tool step's two events separately (before and after executing).
        for (const event of events) keel.append([event]);
        const k1 = readWrittenBytes();
        for (const event of stamped) jsonl.append([event]);
        const j1 = readWrittenBytes();
        await langgraph.putStep([step]);
        const l1 = readWrittenBytes();

        const payload = stamped.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)) + 1, 0);
        const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
        perStep.keel.push({ written: delta(k0, k1), payload });
        perStep.jsonl.push({ written: delta(k1, j1), payload });
        const checkpointBytes = langgraph.lastCheckpointBytes();
        perStep.langgraph.push({ written: delta(j1, l1), payload: checkpointBytes });
        if (index === sizes.bytesAtStep) stateBytesAtN = checkpointBytes;
        if (index % 100 === 0) progress(`bytes: ${index}/${to} steps`);
      }
    } finally {
      keel.close();
      jsonl.close();
      langgraph.close();
      scratch.remove(dir);
    }
    const window = (samples: PerStep[], field: keyof PerStep): number | null => {
      const values = samples.slice(from - 1, to).map((s) => s[field]);
      if (values.some((v) => v === null)) return null;
      return round(mean(values as number[]), 0);
    };
    const metric = (field: keyof PerStep) => ({
      keel: window(perStep.keel, field),
      jsonl: window(perStep.jsonl, field),
      langgraph: window(perStep.langgraph, field),
    });
    const written = metric('written');
    return {
      name: this.name,
      title: this.title,
      params: { atStep: sizes.bytesAtStep, windowFrom: from, windowTo: to, synchronous: 'FULL' },
      metrics: [
        makeMetric(`bytes written per step @${sizes.bytesAtStep} (write syscalls)`, 'B', 'lower', written),
        makeMetric(`payload bytes per step @${sizes.bytesAtStep}`, 'B', 'lower', metric('payload')),
      ],
      notes: [
        `Mean over steps ${from}..${to}. LangGraph's state at step ${sizes.bytesAtStep}: ${stateBytesAtN} bytes per checkpoint.`,
        'Write-syscall bytes include SQLite page and WAL-frame overhead (4 KiB pages), index.sqlite and FTS for Keel.',
        ...(written.keel === null
          ? ['/proc/self/io is not available here: write-syscall bytes not measured.']
          : []),
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
