import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  REALISTIC_SHAPE,
  eventsOfStep,
  generateConversation,
  stampEvents,
  traceOfStep,
} from '../conversation.js';
import type { TraceEntry } from '../../../main/core/log/sessionLog.js';
import { makeMetric, readWrittenBytes, round } from '../harness.js';
import { JsonlLog } from '../peers/jsonlLog.js';
import { createKeelSession } from '../peers/keelStore.js';
import { LangGraphThread } from '../peers/langgraphSaver.js';
import { EVENTS_WAL_AUTOCHECKPOINT } from '../../../main/store/schema.js';
import { WriteMeter } from '../writeMeter.js';
import type { BreakdownRow } from '../writeMeter.js';
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
 * Keel runs the conversation as the turn engine does: each user step starts a turn (`setRunning(true)`),
 * `setRunning(false)` ends it, a model request's trace records go with its assistant message (in the
 * same commit), and those writes count in the step they happen in.
 * Keel's bytes are broken down by file and b-tree (writeMeter.ts).
 */
export const bytesPerStepBench: Bench = {
  name: 'bytes',
  title: 'Bytes written per step',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const dir = scratch.dir('bytes');
    // Steps 1..2N, then close: LangGraph's cost grows linearly with the step, so its mean is its cost at N;
    // Keel's is flat, and every checkpoint's copy-back is in the sum (also the one at close), none missed.
    const from = 1;
    const to = 2 * sizes.bytesAtStep;
    const keel = createKeelSession(join(dir, 'keel-home'), 'bytes-bench');
    const jsonl = JsonlLog.open(join(dir, 'session.jsonl'));
    const langgraph = new LangGraphThread(join(dir, 'langgraph.sqlite'), 'bytes-bench', 'FULL');
    const perStep = { keel: [] as PerStep[], jsonl: [] as PerStep[], langgraph: [] as PerStep[] };
    let jsonlSeq = 1;
    let stateBytesAtN = 0;
    const meter = new WriteMeter([
      {
        label: 'events.sqlite',
        db: join(keel.dir, 'events.sqlite'),
        autocheckpoint: EVENTS_WAL_AUTOCHECKPOINT,
      },
      // index.sqlite keeps SQLite's default.
      { label: 'index.sqlite', db: join(dir, 'keel-home', 'index.sqlite'), autocheckpoint: 1000 },
    ]);
    let breakdown: { total: number; rows: BreakdownRow[] } | undefined;
    let turn = 0;
    let running = false;
    let closed = false;
    try {
      jsonl.append(stampEvents([{ kind: 'user_message', content: 'session start' }], jsonlSeq++));
      let index = 0;
      for (const step of generateConversation(to, REALISTIC_SHAPE)) {
        index += 1;
        const events = eventsOfStep(step);
        const stamped = stampEvents(events, jsonlSeq);
        jsonlSeq += stamped.length;

        meter.count(true);
        let keelWritten: number | null = 0;
        const add = (bytes: number | null) => {
          keelWritten = keelWritten === null || bytes === null ? null : keelWritten + bytes;
        };
        if (step.kind === 'user') {
          if (running) add(meter.measure(() => keel.endTurn([])));
          turn += 1;
          add(meter.measure(() => keel.startTurn()));
          running = true;
        }
        // The turn engine appends a tool step's two events separately (before and after executing), and
        // a request's trace (projection, environment, first token, stream, usage) with its message.
        const trace: TraceEntry[] = traceOfStep(step, turn, new Date().toISOString());
        events.forEach((event, i) => add(meter.measure(() => keel.append([event], i === 0 ? trace : []))));
        meter.step();
        const k1 = readWrittenBytes();
        for (const event of stamped) jsonl.append([event]);
        const j1 = readWrittenBytes();
        await langgraph.putStep([step]);
        const l1 = readWrittenBytes();

        const payload = stamped.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)) + 1, 0);
        const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
        perStep.keel.push({ written: keelWritten, payload });
        perStep.jsonl.push({ written: delta(k1, j1), payload });
        const checkpointBytes = langgraph.lastCheckpointBytes();
        perStep.langgraph.push({ written: delta(j1, l1), payload: checkpointBytes });
        if (index === sizes.bytesAtStep) stateBytesAtN = checkpointBytes;
        if (index % 100 === 0) progress(`bytes: ${index}/${to} steps`);
      }
      // The last turn's end and the closes (each file's final checkpoint) count in the last step.
      const last = {
        keel: perStep.keel.at(-1),
        jsonl: perStep.jsonl.at(-1),
        langgraph: perStep.langgraph.at(-1),
      };
      const addTo = (sample: PerStep | undefined, bytes: number | null) => {
        if (sample)
          sample.written = sample.written === null || bytes === null ? null : sample.written + bytes;
      };
      if (running)
        addTo(
          last.keel,
          meter.measure(() => keel.endTurn([])),
        );
      addTo(
        last.keel,
        meter.measure(() => keel.close(), { closing: true }),
      );
      const c0 = readWrittenBytes();
      closed = true;
      jsonl.close();
      const c1 = readWrittenBytes();
      langgraph.close();
      const c2 = readWrittenBytes();
      addTo(last.jsonl, c0 === null || c1 === null ? null : c1 - c0);
      addTo(last.langgraph, c1 === null || c2 === null ? null : c2 - c1);
      if (c0 !== null) breakdown = meter.breakdown();
    } finally {
      if (!closed) {
        keel.close();
        jsonl.close();
        langgraph.close();
      }
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
    const keelPayload = window(perStep.keel, 'payload');
    const overPayload =
      written.keel === null || keelPayload === null ? null : round(written.keel / keelPayload, 2);
    return {
      name: this.name,
      title: this.title,
      params: { atStep: sizes.bytesAtStep, windowFrom: from, windowTo: to, synchronous: 'FULL' },
      metrics: [
        makeMetric(`bytes written per step @${sizes.bytesAtStep} (write syscalls)`, 'B', 'lower', written),
        makeMetric(`payload bytes per step @${sizes.bytesAtStep}`, 'B', 'lower', metric('payload')),
        makeMetric('bytes written / payload bytes', 'x', 'lower', {
          keel: overPayload,
          jsonl: 1,
        }),
        // Parts that wrote nothing are left out (a note says so): every listed figure is a measured byte count.
        ...(breakdown?.rows ?? [])
          .filter((row) => row.bytes > 0)
          .map((row) => makeMetric(`  Keel: ${row.part}`, 'B', 'lower', { keel: row.bytes })),
      ],
      notes: [
        `Mean over steps ${from}..${to}, the closes included. LangGraph's state at step ${sizes.bytesAtStep}: ${stateBytesAtN} bytes per checkpoint.`,
        'Write-syscall bytes include SQLite page and WAL-frame overhead, index.sqlite and FTS, and the trace, for Keel.',
        ...(breakdown
          ? [
              `Keel breakdown parts that wrote nothing: ${
                breakdown.rows
                  .filter((row) => row.bytes <= 0)
                  .map((row) => row.part)
                  .join('; ') || 'none'
              }.`,
            ]
          : []),
        "Keel breakdown: per call, the /proc/self/io wchar delta and the frames it appended to each -wal file (read from the frame headers; page size + 24 B each), frames put under the b-tree owning the page (dbstat); the rest of a call that filled the WAL to the autocheckpoint is that file's checkpoint copy-back.",
        ...(written.keel === null
          ? ['/proc/self/io is not available here: write-syscall bytes not measured.']
          : []),
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
