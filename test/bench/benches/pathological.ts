import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { NewEvent } from '../../../main/common/events.js';
import { loadEstimator } from '../../../main/core/compaction/tokens.js';
import { projectPayload } from '../../../main/core/projection/index.js';
import { createExcerptCollector } from '../../../main/runner/excerpt.js';
import { createExitMarkerScanner } from '../../../main/runner/exitMarker.js';
import { createRedactor } from '../../../main/sandbox/redact.js';
import { benchSessionInit, stampEvents } from '../conversation.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** The budget every step gets on untrusted text (issue 15): milliseconds per megabyte. */
export const PATHOLOGICAL_MS_PER_MB = 50;

/** The stages untrusted text goes through, in the order a command's output meets them. */
export const PATHOLOGICAL_STAGES = ['capture', 'redaction', 'token counting', 'projection'] as const;

/** Text shapes the attack campaign used, each `bytes` long (ASCII, so characters = bytes). */
function shapes(bytes: number): Record<string, string> {
  const fill = (unit: string) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
  let base64 = '';
  for (let i = 0; base64.length < bytes; i += 1) base64 += ((i * 2654435761) >>> 0).toString(36);
  return {
    'run of =': fill('='),
    'run of one letter': fill('x'),
    'deep nesting': fill('{"a":['),
    'no newlines (base64-like)': Buffer.from(base64).toString('base64').slice(0, bytes),
    'key-like lines': fill(`${'QUJD'.repeat(16)}\n`),
    'secret-name soup': fill('token=x password: "y" api_key='),
  };
}

/** Feeds `text` through one stage and returns how long it took (ms). */
async function timeStage(stage: (typeof PATHOLOGICAL_STAGES)[number], text: string): Promise<number> {
  const chunks: Buffer[] = [];
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += 64 * 1024) chunks.push(bytes.subarray(at, at + 64 * 1024));
  if (stage === 'capture') {
    const started = performance.now();
    const decoder = new StringDecoder('utf8');
    const marker = createExitMarkerScanner('0123456789abcdef');
    const excerpt = createExcerptCollector({ headBytes: 16 * 1024, tailBytes: 16 * 1024 });
    for (const chunk of chunks) excerpt.push(marker.push(decoder.write(chunk)).text);
    excerpt.push(marker.flush());
    excerpt.finish('artifact');
    return performance.now() - started;
  }
  if (stage === 'redaction') {
    const redactor = createRedactor({ env: { BENCH_TOKEN: 'bench-secret-0123456789' } });
    const started = performance.now();
    const stream = redactor.stream();
    for (const chunk of chunks) stream.push(chunk);
    stream.end();
    return performance.now() - started;
  }
  if (stage === 'token counting') {
    // A fresh estimator each run: its cache of counted pieces starts empty.
    const estimator = await loadEstimator({ provider: 'openai', model: 'gpt-4.1' });
    const started = performance.now();
    estimator.count(text);
    return performance.now() - started;
  }
  const events: NewEvent[] = [
    benchSessionInit('pathological', 'pathological'),
    { kind: 'user_message', content: 'go' },
    {
      kind: 'assistant_message',
      content: '',
      toolCalls: [
        { id: 'c1', name: 'run_command', arguments: JSON.stringify({ command: text.slice(0, 4096) }) },
      ],
      stopReason: 'tool_use',
    },
    { kind: 'tool_result', toolCallId: 'c1', tool: 'run_command', content: text, exitCode: 0 },
  ];
  const stamped = stampEvents(events, 1);
  const started = performance.now();
  const payload = projectPayload(stamped, { system: 'bench' });
  JSON.stringify(payload);
  return performance.now() - started;
}

/**
 * Pathological untrusted text (long runs, deep nesting, no newlines, key-like lines, secret names) fed
 * through capture (decoder, exit-marker scan, excerpt), redaction (the stream, 64 KiB chunks), token
 * counting (compaction's estimator) and projection (payload + its JSON). Median ms per MB of each stage
 * on each shape; the target is PATHOLOGICAL_MS_PER_MB for the worst shape of every stage.
 */
export const pathologicalBench: Bench = {
  name: 'pathological',
  title: 'Untrusted text: capture, redaction, token counting, projection (ms per MB)',
  async run({ sizes, progress }) {
    const started = performance.now();
    const bytes = sizes.pathologicalBytes;
    const megabytes = bytes / (1024 * 1024);
    const metrics = [];
    const worst: Record<string, number> = {};
    for (const [shape, text] of Object.entries(shapes(bytes))) {
      for (const stage of PATHOLOGICAL_STAGES) {
        const samples: number[] = [];
        for (let run = 0; run < sizes.pathologicalRuns; run += 1) samples.push(await timeStage(stage, text));
        // At least 0.001: a stage too fast for the clock still reports a positive figure.
        const perMb = Math.max(round(median(samples) / megabytes, 3), 0.001);
        worst[stage] = Math.max(worst[stage] ?? 0, perMb);
        metrics.push(makeMetric(`${stage}: ${shape}`, 'ms/MB', 'lower', { keel: perMb }));
      }
      progress(`pathological: ${shape}`);
    }
    for (const stage of PATHOLOGICAL_STAGES) {
      metrics.push(makeMetric(`${stage}: worst shape`, 'ms/MB', 'lower', { keel: worst[stage] ?? null }));
    }
    return {
      name: this.name,
      title: this.title,
      params: { bytes, runs: sizes.pathologicalRuns, targetMsPerMb: PATHOLOGICAL_MS_PER_MB },
      metrics,
      notes: [
        'Medians per stage and shape, scaled to one MB. Token counting starts each run with an empty piece cache.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};
