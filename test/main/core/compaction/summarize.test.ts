import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildRangeRequest,
  planSummary,
  renderEvent,
  summarizeEvents,
  SummaryError,
  SUMMARY_SYSTEM_PROMPT,
} from '../../../../main/core/compaction/summarize.js';
import { loadEstimator, type TokenEstimator } from '../../../../main/core/compaction/tokens.js';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import { SUMMARY_PREFIX } from '../../../../main/core/projection/index.js';
import { createProvider } from '../../../../main/providers/index.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { isSummaryRequest, messagesOf, summaryFor } from './scripted.js';

let server: ProviderServer;
let estimator: TokenEstimator;

beforeAll(async () => {
  estimator = await loadEstimator({ provider: 'openai-compatible', model: 'scripted-model' });
});

beforeEach(async () => {
  server = await new ProviderServer({
    respond: (request) => ({ kind: 'reply', text: summaryFor(request) }),
  }).start();
});

afterEach(async () => {
  await server.close();
});

const SESSION_ID = '01JSESSIONIDXYZ';
const OBJECTIVE = 'OBJECTIVE: move billing to Postgres. CONSTRAINT: staging only.';

/** A session's events with everything volatile a request must never carry: times, ids, keys, a summary. */
function sessionEvents(turns: number, resultSize = 40): SessionEvent[] {
  const out: NewEvent[] = [
    {
      kind: 'session_created',
      sessionId: SESSION_ID,
      projectFolder: '/home/me/project',
      provider: 'openai-compatible',
      model: 'scripted-model',
      contextWindow: 4000,
      toolMode: 'read-only',
      policy: 'read-only',
    },
    { kind: 'user_message', content: OBJECTIVE, messageId: 'msg-VOLATILE-1' },
  ];
  for (let i = 0; i < turns; i++) {
    out.push(
      {
        kind: 'assistant_message',
        content: `Reading file ${i}.`,
        toolCalls: [{ id: `call_VOLATILE_${i}`, name: 'read_file', arguments: `{"path":"src/f${i}.txt"}` }],
        usage: { inputTokens: 1234, outputTokens: 56 },
        model: 'scripted-model',
      },
      {
        kind: 'tool_call_started',
        toolCallId: `call_VOLATILE_${i}`,
        tool: 'read_file',
        idempotencyKey: `ev${i}-read_file`,
      },
      {
        kind: 'tool_result',
        toolCallId: `call_VOLATILE_${i}`,
        tool: 'read_file',
        content: `line of file ${i} `.repeat(resultSize),
        idempotencyKey: `ev${i}-read_file`,
        durationMs: 12.5,
      },
      { kind: 'user_message', content: i === 1 ? 'CONSTRAINT: do not touch migrations.' : `next ${i}` },
    );
    if (i === 2) {
      out.push({
        kind: 'compaction',
        through: 5,
        fromSeq: 2,
        summary: 'PREVIOUS-SUMMARY-MUST-NOT-LEAK',
        pinned: OBJECTIVE,
        tokensBefore: 1,
        tokensAfter: 1,
        model: 'scripted-model',
      });
    }
  }
  return out.map((event, i) => ({
    ...event,
    seq: i + 1,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  }));
}

const provider = () =>
  createProvider({ provider: 'openai-compatible', baseUrl: server.openaiBaseUrl }, {}, {});

describe('summary requests', () => {
  it('carry the fixed system text and original events only: no earlier summary, no clock, no id', async () => {
    const events = sessionEvents(6);
    const result = await summarizeEvents({
      events: events.slice(1),
      pinned: OBJECTIVE,
      provider: provider(),
      model: 'scripted-model',
      contextWindow: 4000,
      estimator,
    });
    expect(result.summary).toContain('CONSTRAINT: do not touch migrations.');
    expect(server.requests.length).toBeGreaterThan(0);
    for (const request of server.requests) {
      expect(isSummaryRequest(request)).toBe(true);
      const messages = messagesOf(request);
      expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect((request.body as { tools?: unknown }).tools).toBeUndefined();
      expect(request.raw).not.toContain('PREVIOUS-SUMMARY-MUST-NOT-LEAK');
      expect(request.raw).not.toContain(SUMMARY_PREFIX);
      expect(request.raw).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
      expect(request.raw).not.toContain('VOLATILE');
      expect(request.raw).not.toContain(SESSION_ID);
      expect(request.raw).not.toContain('ev1-read_file');
      expect(messages[1]?.content).toContain(`<<<\n${OBJECTIVE}\n>>>`);
    }
  });

  it('are byte-identical for the same events, so they never depend on when or where they run', async () => {
    const events = sessionEvents(4).slice(1);
    const input = { pinned: OBJECTIVE, model: 'scripted-model', contextWindow: 4000, estimator };
    await summarizeEvents({ ...input, events, provider: provider() });
    const first = server.requests.map((request) => request.raw);
    server.requests.length = 0;
    await summarizeEvents({ ...input, events, provider: provider() });
    expect(server.requests.map((request) => request.raw)).toEqual(first);
  });

  it('summarize originals that do not fit in chunks, then merge only the chunk summaries of this run', async () => {
    const events = sessionEvents(30, 60).slice(1);
    const plan = planSummary(4000, OBJECTIVE, estimator);
    const result = await summarizeEvents({
      events,
      pinned: OBJECTIVE,
      provider: provider(),
      model: 'scripted-model',
      contextWindow: 4000,
      estimator,
    });
    expect(result.chunks).toBeGreaterThan(2);
    const chunkRequests = server.requests.filter((r) => messagesOf(r)[1]?.content?.includes('(part '));
    const mergeRequests = server.requests.filter((r) =>
      messagesOf(r)[1]?.content?.includes('Partial summaries'),
    );
    expect(chunkRequests).toHaveLength(result.chunks);
    expect(mergeRequests.length).toBeGreaterThan(0);
    expect(result.requests).toBe(chunkRequests.length + mergeRequests.length);
    // Every original message event is in exactly one chunk request, each chunk within the window's budget.
    const rendered = events.filter((event) => renderEvent(event, 100) !== undefined);
    for (const event of rendered) {
      const holders = chunkRequests.filter((r) => messagesOf(r)[1]?.content?.includes(`\n#${event.seq} `));
      expect(holders).toHaveLength(1);
    }
    for (const request of chunkRequests) {
      const body = messagesOf(request)[1]?.content ?? '';
      expect(estimator.count(body)).toBeLessThanOrEqual(plan.chunkTokens + estimator.count(OBJECTIVE) + 60);
    }
    // The merge input is the chunk summaries this run produced (each carries its unique summary id).
    const chunkIds = chunkRequests.length;
    const mergedInput = mergeRequests.map((r) => messagesOf(r)[1]?.content ?? '').join('\n');
    const ids = [...mergedInput.matchAll(/summary-id (S\d+)/g)].map((match) => match[1]);
    expect(new Set(ids).size).toBeGreaterThanOrEqual(chunkIds);
    expect(mergedInput).not.toContain('PREVIOUS-SUMMARY-MUST-NOT-LEAK');
    expect(result.summary).toContain('CONSTRAINT: staging only.');
    expect(result.summary).toContain('CONSTRAINT: do not touch migrations.');
    expect(result.summary).toContain(`events #2–#${events[events.length - 1]?.seq}`);
  });

  it('name background commands started and how they ended (issue #32), so a summary knows what still runs', () => {
    const base = { at: '2026-01-01T00:00:00.000Z' };
    const started = renderEvent(
      {
        ...base,
        seq: 7,
        kind: 'background_started',
        handle: 'bg-d',
        command: 'npm run dev',
        toolCallId: 'd',
        artifact: 'a',
      },
      1000,
    );
    const lost = renderEvent(
      { ...base, seq: 9, kind: 'background_exited', handle: 'bg-d', reason: 'keel_ended' },
      1000,
    );
    expect(started).toBe('#7 background command bg-d started: npm run dev');
    expect(lost).toBe(
      '#9 background command bg-d is not running: it ended with the Keel that ran it (Keel quit or crashed)',
    );
  });

  it('clip a huge tool output to fit, naming the event that holds the full text', () => {
    const event = sessionEvents(1, 20_000)[4] as SessionEvent;
    const text = renderEvent(event, 1000) ?? '';
    expect(text.length).toBeLessThan(1200);
    expect(text).toContain(`the full text is event #${event.seq}`);
    const request = buildRangeRequest(OBJECTIVE, [{ seq: event.seq, text, tokens: 1 }]);
    expect(request.messages[0]?.content).toBe(SUMMARY_SYSTEM_PROMPT);
  });

  it('fail with SummaryError when the provider refuses, and report a stop as aborted', async () => {
    server.enqueue({ kind: 'fail', status: 400, message: 'context length exceeded' });
    const failing = summarizeEvents({
      events: sessionEvents(1).slice(1),
      pinned: OBJECTIVE,
      provider: provider(),
      model: 'scripted-model',
      contextWindow: 4000,
      estimator,
    });
    await expect(failing).rejects.toBeInstanceOf(SummaryError);
    await expect(failing).rejects.toMatchObject({ aborted: false, message: /context length exceeded/ });

    server.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const stopped = summarizeEvents({
      events: sessionEvents(1).slice(1),
      pinned: OBJECTIVE,
      provider: provider(),
      model: 'scripted-model',
      contextWindow: 4000,
      estimator,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    await expect(stopped).rejects.toMatchObject({ aborted: true });
  });

  it('refuse a window too small to hold a summary request', () => {
    expect(() => planSummary(600, OBJECTIVE, estimator)).toThrow(/too small to summarize/);
    expect(() => planSummary(150, 'goal '.repeat(10_000), estimator)).toThrow(/too small to summarize/);
  });

  it('quote a huge first message clipped to a fifth of the window (it stays pinned verbatim in the payload)', () => {
    const huge = `${OBJECTIVE}\n${'pasted log line\n'.repeat(20_000)}`;
    const plan = planSummary(4000, huge, estimator);
    expect(estimator.count(plan.objective)).toBeLessThanOrEqual(800);
    expect(plan.objective.startsWith(OBJECTIVE)).toBe(true);
    expect(plan.objective).toContain('the full text is the first user message');
  });
});
