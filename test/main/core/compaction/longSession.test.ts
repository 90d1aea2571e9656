import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureNextRequest } from '../../../../main/core/compaction/compact.js';
import type { ContextMeasure } from '../../../../main/core/compaction/trigger.js';
import { loadEstimator } from '../../../../main/core/compaction/tokens.js';
import type { EventOf, SessionEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { SUMMARY_PREFIX } from '../../../../main/core/projection/index.js';
import { createTurnHost } from '../../../../main/core/harness/turnHost.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { ProviderServer, type RecordedRequest, type ScriptStep } from '../../../support/providerServer.js';
import { ESTIMATE_MESSAGES_ERROR, referenceRequestTokens } from './reference.js';
import { conversationOf, isSummaryRequest, messagesOf, replyWithUsage, summaryFor } from './scripted.js';

/*
 * The acceptance test of compaction: a scripted 60-turn session on a 4,000-token window, run turn by turn
 * through runTurn with the real turn host (tools, box, the compaction hook installed by createTurnHost)
 * against a loopback provider that reports usage as OpenAI documents counting it.
 */

const WINDOW = 4_000;
const ENV = { OPENAI_API_KEY: 'sk-test' };
const OBJECTIVE =
  'OBJECTIVE: migrate the billing service to Postgres without downtime. CONSTRAINT: staging only, never production.';
const PLANTED: Record<number, string> = {
  2: 'Before you start. CONSTRAINT: do not touch migrations. Read src/f2.txt.',
  3: 'Also: CONSTRAINT: keep the public API of billing stable. Read src/f3.txt.',
  5: 'DECISION: we use pgbouncer in transaction mode. Read src/f0.txt.',
};
const CONSTRAINTS = [
  'CONSTRAINT: staging only, never production.',
  'CONSTRAINT: do not touch migrations.',
  'CONSTRAINT: keep the public API of billing stable.',
];

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
const logs: SessionLog[] = [];

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-compaction-')));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  for (let i = 0; i < 5; i++) {
    const lines = Array.from(
      { length: 10 },
      (_, n) => `billing module ${i}, line ${n + 1}: charge(account, amount)`,
    );
    fs.writeFileSync(path.join(project, 'src', `f${i}.txt`), `${lines.join('\n')}\n`);
  }
});

afterEach(async () => {
  for (const log of logs.splice(0)) log.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function createSession(metadata?: Record<string, unknown>): SessionLog {
  const log = SessionLog.create(home, {
    projectFolder: project,
    // OpenAI's o200k tokenizer is public: the estimate and the provider's count use the same one.
    provider: 'openai',
    model: 'gpt-4.1',
    baseUrl: server.openaiBaseUrl,
    contextWindow: WINDOW,
    toolMode: 'read-only',
    policy: 'read-only',
    systemPrompt: 'You are Keel, a coding agent.',
    ...(metadata ? { metadata } : {}),
  });
  logs.push(log);
  return log;
}

/** Normal answers: read the file the user named, then answer in a few sentences. */
function answer(request: RecordedRequest): ScriptStep {
  const messages = conversationOf(request);
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const file = /src\/f\d\.txt/.exec(last.content ?? '')?.[0] ?? 'src/f1.txt';
    return replyWithUsage(request, { toolCalls: [{ name: 'read_file', arguments: { path: file } }] });
  }
  return replyWithUsage(request, {
    text: 'The file defines charge(account, amount) on each line; nothing there touches the schema. I would keep the call sites as they are and move on to the next module when you are ready.',
  });
}

const prompt = (turn: number) =>
  turn === 1
    ? OBJECTIVE
    : (PLANTED[turn] ?? `Turn ${turn}: read src/f${turn % 5}.txt and tell me what it does.`);

const compactionsOf = (log: SessionLog) =>
  log.read().filter((event): event is EventOf<'compaction'> => event.kind === 'compaction');

describe('compaction over a long session', () => {
  it('keeps the goal and every early constraint through 60 turns on a 4,000-token window', async () => {
    server = await new ProviderServer({
      respond: (request) =>
        isSummaryRequest(request) ? { kind: 'reply', text: summaryFor(request) } : answer(request),
    }).start();
    const log = createSession();
    const host: TurnHost = {
      ...(await createTurnHost(log, { env: ENV, compaction: { threshold: 0.75, keepRecent: 0.2 } })),
      retry: { baseDelayMs: 1 },
    };
    const hook = host.beforeRequest;
    if (!hook) throw new Error('createTurnHost installed no compaction hook');
    const estimator = await loadEstimator({ provider: 'openai', model: 'gpt-4.1' });
    // What the trigger measured for each main request, in order (taken after the hook ran).
    const measured: ContextMeasure[] = [];
    host.beforeRequest = async (context) => {
      await hook(context);
      measured.push(
        measureNextRequest({
          view: log.projectionView(),
          ...(context.state.lastUsage ? { lastUsage: context.state.lastUsage } : {}),
          ...(context.state.lastUsageSeq !== undefined ? { lastUsageSeq: context.state.lastUsageSeq } : {}),
          systemPrompt: context.systemPrompt,
          tools: host.registry.definitions(),
          estimator,
        }),
      );
    };

    // Which compactions existed when each summary request was made.
    const summariesBefore = new Map<RecordedRequest, string[]>();
    for (let turn = 1; turn <= 60; turn++) {
      const count = server.requests.length;
      const outcome = await runTurn(host, { prompt: prompt(turn) });
      expect(outcome.status, `turn ${turn}`).toBe('completed');
      const known = compactionsOf(log).map((event) => event.summary);
      for (const request of server.requests.slice(count))
        if (isSummaryRequest(request)) summariesBefore.set(request, known);
    }

    const events = log.read();
    const compactions = compactionsOf(log);
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    expect(server.requests.filter((request) => request.rejected !== undefined)).toEqual([]);

    // 1. The pinned first user message is in every main request, verbatim.
    const main = server.requests.filter((request) => !isSummaryRequest(request));
    expect(main.length).toBe(120);
    for (const [i, request] of main.entries()) {
      const users = messagesOf(request).filter((message) => message.role === 'user');
      expect(users[0]?.content, `main request ${i}`).toBe(OBJECTIVE);
    }

    // 2. Every constraint planted early is in the newest summary; the pinned field is the goal.
    const newest = compactions[compactions.length - 1] as EventOf<'compaction'>;
    for (const constraint of CONSTRAINTS) expect(newest.summary).toContain(constraint);
    expect(newest.summary).toContain('DECISION: we use pgbouncer in transaction mode.');
    for (const compaction of compactions) {
      expect(compaction.pinned).toBe(OBJECTIVE);
      expect(compaction.fromSeq).toBe(2);
      expect(compaction.model).toBe('gpt-4.1');
      expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore ?? 0);
    }
    // Each compaction reaches further than the one before, always from the start.
    const throughs = compactions.map((compaction) => compaction.through);
    expect([...throughs].sort((a, b) => a - b)).toEqual(throughs);
    expect(new Set(throughs).size).toBe(throughs.length);

    // 3. No summary request ever contains a compaction's summary as its input (nor the projection's prefix).
    const summaryRequests = server.requests.filter(isSummaryRequest);
    expect(summaryRequests.length).toBeGreaterThan(compactions.length); // chunked and merged at least once
    for (const request of summaryRequests) {
      for (const summary of summariesBefore.get(request) ?? []) expect(request.raw).not.toContain(summary);
      for (const compaction of compactions) expect(request.raw).not.toContain(compaction.summary);
      expect(request.raw).not.toContain(SUMMARY_PREFIX);
      expect(request.raw).not.toContain(log.id);
      expect(request.raw).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
      expect(request.raw).not.toMatch(/call_\d+_\d+/);
    }
    const traces = log.readTrace().filter((entry) => entry.stage === 'compaction');
    expect(traces.map((entry) => (entry.detail as { status: string }).status)).not.toContain('failed');
    expect(traces.some((entry) => ((entry.detail as { chunks?: number }).chunks ?? 0) > 1)).toBe(true);

    // 4. The requests sent stay in the window, and the trigger measured them within the stated error.
    expect(measured).toHaveLength(main.length);
    const limit = WINDOW * 0.75;
    const errors = { usage: [] as number[], compaction: [] as number[], estimate: [] as number[] };
    for (const [i, request] of main.entries()) {
      const actual = referenceRequestTokens(request.body);
      expect(actual, `main request ${i}`).toBeLessThanOrEqual(WINDOW);
      const measure = measured[i] as ContextMeasure;
      errors[measure.source].push((measure.tokens - actual) / actual);
      // A request over the limit only when the trigger saw it over too (no compaction was possible).
      if (actual > limit * (1 + ESTIMATE_MESSAGES_ERROR)) expect(measure.tokens).toBeGreaterThan(limit);
    }
    // From the provider's report (+ appended events), and right after a compaction (its size rebased on
    // the report it replaced, + appended events): within the stated 3%.
    expect(errors.compaction.length).toBeGreaterThanOrEqual(compactions.length);
    for (const error of [...errors.usage, ...errors.compaction]) {
      expect(Math.abs(error)).toBeLessThanOrEqual(ESTIMATE_MESSAGES_ERROR);
    }
    // Only the very first request, before any report, is estimated whole: never under, tools counted high.
    expect(errors.estimate).toHaveLength(1);
    expect(errors.estimate[0]).toBeGreaterThanOrEqual(0);
    // Nothing was deleted: every original event is still in the log.
    expect(events.filter((event) => event.kind === 'user_message')).toHaveLength(60);
  }, 60_000);

  it('leaves the log as it was when the summary request fails, and the turn goes on', async () => {
    server = await new ProviderServer({
      respond: (request) =>
        isSummaryRequest(request)
          ? { kind: 'fail', status: 400, message: 'summary refused' }
          : answer(request),
    }).start();
    const log = createSession();
    const host: TurnHost = {
      ...(await createTurnHost(log, { env: ENV, compaction: { threshold: 0.5, keepRecent: 0.2 } })),
      retry: { baseDelayMs: 1 },
    };
    for (let turn = 1; turn <= 8; turn++) {
      expect((await runTurn(host, { prompt: prompt(turn) })).status).toBe('completed');
    }
    expect(compactionsOf(log)).toEqual([]);
    expect(log.read().filter((event: SessionEvent) => event.kind === 'error')).toEqual([]);
    const attempts = log.readTrace().filter((entry) => entry.stage === 'compaction');
    const failed = attempts.find((entry) => (entry.detail as { status: string }).status === 'failed');
    expect(failed?.detail).toMatchObject({ status: 'failed', trigger: 'auto', reason: /summary refused/ });
  }, 30_000);

  it('appends nothing when the user stops the turn during the summary', async () => {
    let stop: (() => void) | undefined;
    server = await new ProviderServer({
      respond: (request) => {
        if (!isSummaryRequest(request)) return answer(request);
        setTimeout(() => stop?.(), 50);
        return { kind: 'hang' };
      },
    }).start();
    const log = createSession();
    let outcome;
    for (let turn = 1; turn <= 12; turn++) {
      const controller = new AbortController();
      stop = () => controller.abort();
      const host: TurnHost = {
        ...(await createTurnHost(log, {
          env: ENV,
          signal: controller.signal,
          compaction: { threshold: 0.5, keepRecent: 0.2 },
        })),
        retry: { baseDelayMs: 1 },
      };
      outcome = await runTurn(host, { prompt: prompt(turn) });
      if (outcome.status !== 'completed') break;
    }
    expect(outcome?.status).toBe('interrupted');
    expect(compactionsOf(log)).toEqual([]);
    const last = log.read().at(-1);
    expect(last?.kind).toBe('interrupted');
    const trace = log.readTrace().filter((entry) => entry.stage === 'compaction');
    expect(trace.at(-1)?.detail).toMatchObject({ status: 'failed', aborted: true });
  }, 30_000);

  it('never compacts with threshold 0, globally or as a session override', async () => {
    server = await new ProviderServer({ respond: answer }).start();
    const off = await createTurnHost(createSession(), { env: ENV, compaction: { threshold: 0 } });
    expect(off.beforeRequest).toBeUndefined();
    const sessionOff = await createTurnHost(createSession({ compaction: { threshold: 0 } }), { env: ENV });
    expect(sessionOff.beforeRequest).toBeUndefined();
    const log = createSession({ compaction: { threshold: 0 } });
    const host: TurnHost = { ...(await createTurnHost(log, { env: ENV })), retry: { baseDelayMs: 1 } };
    for (let turn = 1; turn <= 12; turn++) await runTurn(host, { prompt: prompt(turn) });
    expect(compactionsOf(log)).toEqual([]);
    expect(server.requests.filter(isSummaryRequest)).toEqual([]);
  }, 30_000);
});
