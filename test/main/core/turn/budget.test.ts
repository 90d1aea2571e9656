import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { createSubagentRunner } from '../../../../main/core/subagents/childSession.js';
import {
  checkBudget,
  emptySpend,
  estimateInputTokens,
  worstCase,
} from '../../../../main/core/turn/budget.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { loadSessionState } from '../../../../main/core/turn/loadState.js';
import type { RecordedRequest, ScriptStep } from '../../../support/providerServer.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';
import { createProvider } from '../../../../main/providers/index.js';
import { isChildRequest, scriptBoth } from '../subagents/support.js';

let script: (request: RecordedRequest) => ScriptStep = () => ({ kind: 'reply', text: 'unscripted' });
const fixture = useTurnHostFixture('keel-budget-', {
  server: { respond: (request) => script(request) },
  prepare: () => {
    script = () => ({ kind: 'reply', text: 'unscripted' });
  },
});

const ofKind = <K extends SessionEvent['kind']>(events: readonly SessionEvent[], kind: K) =>
  events.filter((event): event is EventOf<K> => event.kind === kind);

/** A session on the scripted server with a budget_set recorded, as `keel run --budget-*` leaves one. */
function cappedSession(caps: { usd?: number; tokens?: number }, model?: string): SessionLog {
  const log = model
    ? fixture.track(
        SessionLog.create(fixture.home, {
          projectFolder: fixture.project,
          provider: 'anthropic',
          model,
          baseUrl: fixture.server.anthropicBaseUrl,
          contextWindow: 1_000_000,
          reasoningEffort: 'off',
          toolMode: 'read-only',
          policy: 'read-only',
        }),
      )
    : fixture.createSession({ policy: 'read-only', toolMode: 'read-only' });
  log.append({ kind: 'budget_set', ...caps, source: 'created' }, { expectedLastSeq: log.lastSeq() });
  return log;
}

const host = (log: SessionLog, extra: Partial<TurnHost> = {}) =>
  fixture.hostFor(log, {
    maxOutputTokens: 500,
    createProvider: (pin) => createProvider(pin, { anthropic: 'sk-ant-test' }, {}),
    ...extra,
  });

describe('the cap check (pure)', () => {
  const spent = (tokens: number, usd = 0) => ({ ...emptySpend(), requests: { tokens, usd } });

  it('lets a request through while spent + its worst case stays within every cap', () => {
    expect(checkBudget({ tokens: 1000 }, spent(400), { inputTokens: 100, maxOutputTokens: 500 })).toEqual({
      ok: true,
    });
    expect(
      checkBudget({ tokens: 1000 }, spent(401), { inputTokens: 100, maxOutputTokens: 500 }),
    ).toMatchObject({
      ok: false,
      limit: 'tokens',
      cap: 1000,
    });
  });

  it('says by how much a cap was already crossed', () => {
    const verdict = checkBudget({ usd: 1 }, spent(10, 1.25), {
      inputTokens: 1,
      maxOutputTokens: 1,
      usd: 0.01,
    });
    expect(verdict).toMatchObject({ ok: false, limit: 'usd', overBy: 0.25 });
  });

  it('refuses a USD-capped request whose model has no price, since it cannot be held', () => {
    const request = worstCase('scripted-model', 10, 10);
    expect(request.usd).toBeUndefined();
    expect(checkBudget({ usd: 100 }, emptySpend(), request)).toMatchObject({ ok: false, unpriced: true });
  });

  it('prices the worst case at the dearer of input and cache-write rates and the output rate', () => {
    // claude-sonnet-5-5: $2 input, $2.50 cache write, $10 output per million.
    expect(worstCase('claude-sonnet-5-5', 1_000_000, 100_000).usd).toBeCloseTo(2.5 + 1, 10);
  });

  it('estimates input from characters, leaning high', () => {
    const text = 'x'.repeat(3000);
    expect(estimateInputTokens({ messages: [{ role: 'user', content: text }] }, 300)).toBe(1100 + 8);
  });
});

describe('a token cap stops a turn before the request that would cross it', () => {
  it('sends no request past the cap, records budget_reached, and resume continues once the cap is raised', async () => {
    const log = cappedSession({ tokens: 100_000 });
    script = () => ({
      kind: 'reply',
      text: 'First answer.',
      usage: { inputTokens: 99_000, outputTokens: 200 },
    });
    expect(await runTurn(host(log), { prompt: 'one' })).toMatchObject({ status: 'completed' });
    expect(fixture.server.requests).toHaveLength(1);

    const outcome = await runTurn(host(log), { prompt: 'two' });
    expect(outcome.status).toBe('budget_reached');
    // The scripted server received nothing past the cap.
    expect(fixture.server.requests).toHaveLength(1);
    const reached = ofKind(log.read(), 'budget_reached');
    expect(reached).toHaveLength(1);
    expect(reached[0]).toMatchObject({
      limit: 'tokens',
      cap: 100_000,
      spent: { tokens: 99_200 },
      spentOn: { requests: { tokens: 99_200 }, subagents: { tokens: 0 } },
      request: { maxOutputTokens: 500 },
    });
    expect(reached[0]?.overBy).toBeUndefined();
    expect(reached[0]?.message).toContain(`keel budget ${log.id} --tokens COUNT`);
    expect(reached[0]?.message).toContain('spent 99,200 tokens');
    // The request a capped session sends names its output limit, so the worst case holds.
    expect(
      (fixture.server.requests[0]?.body as { max_completion_tokens?: number }).max_completion_tokens,
    ).toBe(500);

    log.append({ kind: 'budget_set', tokens: 300_000, source: 'user' }, { expectedLastSeq: log.lastSeq() });
    script = () => ({
      kind: 'reply',
      text: 'Second answer.',
      usage: { inputTokens: 1000, outputTokens: 10 },
    });
    expect(await runTurn(host(log))).toMatchObject({ status: 'completed', text: 'Second answer.' });
    expect(fixture.server.requests).toHaveLength(2);
    // The resumed request carries the user's second prompt, the one the cap held back.
    expect(JSON.stringify(fixture.server.requests[1]?.body)).toContain('two');
  });

  it('says by how much the last request crossed the cap when its actual input was above the estimate', async () => {
    const log = cappedSession({ tokens: 100_000 });
    script = () => ({ kind: 'reply', text: 'Big.', usage: { inputTokens: 120_000, outputTokens: 200 } });
    await runTurn(host(log), { prompt: 'one' });
    expect(await runTurn(host(log), { prompt: 'two' })).toMatchObject({ status: 'budget_reached' });
    const [reached] = ofKind(log.read(), 'budget_reached');
    expect(reached?.overBy).toBe(20_200);
    expect(reached?.message).toContain('crossed by 20,200 tokens');
    expect(fixture.server.requests).toHaveLength(1);
  });

  it('checks again from the log after a crash between the check and the request: nothing there lets it through', async () => {
    const log = cappedSession({ tokens: 100_000 });
    script = () => ({ kind: 'reply', text: 'First.', usage: { inputTokens: 60_000, outputTokens: 100 } });
    await runTurn(host(log), { prompt: 'one' });
    // What a crash after the check leaves: the prompt recorded, no reply. Meanwhile the cap was lowered.
    log.append({ kind: 'user_message', content: 'two' }, { expectedLastSeq: log.lastSeq() });
    log.append({ kind: 'budget_set', tokens: 61_000, source: 'user' }, { expectedLastSeq: log.lastSeq() });
    fixture.close(log);
    const reopened = fixture.track(SessionLog.open(fixture.home, log.id, { write: true }));
    const state = loadSessionState(reopened);
    expect(state.caps).toEqual({ tokens: 61_000 });
    expect(state.spend?.requests.tokens).toBe(60_100);
    expect(await runTurn(host(reopened))).toMatchObject({ status: 'budget_reached' });
    expect(fixture.server.requests).toHaveLength(1);
  });
});

describe('a USD cap', () => {
  it('prices each request for the model that answered and stops before one that could cross it', async () => {
    // claude-sonnet-5-5 at $2 in / $10 out per million: 200k input is $0.40.
    const log = cappedSession({ usd: 0.405 }, 'claude-sonnet-5-5');
    script = () => ({ kind: 'reply', text: 'Priced.', usage: { inputTokens: 200_000, outputTokens: 100 } });
    expect(await runTurn(host(log), { prompt: 'one' })).toMatchObject({ status: 'completed' });
    expect(await runTurn(host(log), { prompt: 'two' })).toMatchObject({ status: 'budget_reached' });
    expect(fixture.server.requests).toHaveLength(1);
    const [reached] = ofKind(log.read(), 'budget_reached');
    expect(reached?.limit).toBe('usd');
    expect(reached?.spent.usd).toBeCloseTo(0.401, 10);
    expect(reached?.request.usd).toBeGreaterThan(0.005);
    expect(reached?.message).toContain('spent $0.401');
    expect(reached?.message).toContain(`keel budget ${log.id} --usd AMOUNT`);
  });
});

describe("a subagent's spend lives within its parent's cap", () => {
  it("stops the child before the request that would cross the parent's cap, then the parent", async () => {
    script = scriptBoth({
      parent: (step) =>
        step === 0
          ? {
              kind: 'reply',
              text: 'Delegating.',
              toolCalls: [{ id: 'spawn1', name: 'spawn_subagent', arguments: { task: 'look around' } }],
              usage: { inputTokens: 10_000, outputTokens: 100 },
            }
          : { kind: 'reply', text: 'parent unscripted' },
      child: (step) =>
        step === 0
          ? {
              kind: 'reply',
              text: 'Listing.',
              toolCalls: [{ id: 'c1', name: 'list_dir', arguments: { path: '.' } }],
              usage: { inputTokens: 89_000, outputTokens: 100 },
            }
          : { kind: 'reply', text: 'child unscripted' },
    });
    const parent = cappedSession({ tokens: 100_000 });
    const parentHost = fixture.hostFor(parent, { maxOutputTokens: 500 }, { subagents: true });
    parentHost.subagents = createSubagentRunner({ home: fixture.home, parent: parentHost });
    const outcome = await runTurn(parentHost, { prompt: 'go' });
    expect(outcome.status).toBe('budget_reached');
    // One parent request and one child request: neither's second was sent.
    expect(fixture.server.requests.filter((request) => !isChildRequest(request))).toHaveLength(1);
    expect(fixture.server.requests.filter(isChildRequest)).toHaveLength(1);
    const events = parent.read();
    const [result] = ofKind(events, 'subagent_result');
    expect(result?.outOfBudget).toBe(true);
    expect(result?.content).toContain(`keel budget ${parent.id}`);
    const [reached] = ofKind(events, 'budget_reached');
    expect(reached?.spentOn.subagents.tokens).toBe(89_100);
    expect(reached?.spent.tokens).toBe(99_200);
  });
});

describe('a server that reports no usage', () => {
  it('records an estimate marked as one, and counts it against the cap', async () => {
    const log = cappedSession({ tokens: 1_000_000 });
    script = () => ({ kind: 'reply', text: 'x'.repeat(300), omitUsage: true });
    await runTurn(host(log), { prompt: 'hello' });
    const [message] = ofKind(log.read(), 'assistant_message');
    expect(message?.usage).toMatchObject({ outputTokens: 100, estimated: true });
    expect(message?.usage?.inputTokens).toBeGreaterThan(0);
    expect(loadSessionState(log).spend?.requests.tokens).toBe(
      (message?.usage?.inputTokens ?? 0) + (message?.usage?.outputTokens ?? 0),
    );
  });
});

describe('pause_turn', () => {
  it('continues a paused reply by sending the conversation back, a bounded number of times', async () => {
    const log = fixture.createSession({ policy: 'read-only', toolMode: 'read-only', provider: 'anthropic' });
    let n = 0;
    script = () => {
      n++;
      return n < 3
        ? { kind: 'reply', text: `part ${n}`, stopReason: 'pause_turn' }
        : { kind: 'reply', text: 'done' };
    };
    const notices: string[] = [];
    const withEnvironment = host(log, {
      hooks: { onNotice: (text) => notices.push(text) },
      environment: () => Promise.resolve('<environment>now</environment>'),
    });
    const outcome = await runTurn(withEnvironment, { prompt: 'search the web' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'done' });
    expect(fixture.server.requests).toHaveLength(3);
    expect(notices.filter((text) => text.includes('paused the turn'))).toHaveLength(2);
    // The paused replies go back as the assistant's turn so far, last in the request, as the API asks.
    const last = fixture.server.requests[2]?.body as { messages: { role: string; content: unknown }[] };
    expect(last.messages.at(-1)?.role).toBe('assistant');
    expect(JSON.stringify(last.messages.at(-1)?.content)).toMatch(/part 1.*part 2/);

    script = () => ({ kind: 'reply', text: 'again', stopReason: 'pause_turn' });
    const bounded = await runTurn(host(log), { prompt: 'more' });
    expect(bounded).toMatchObject({ status: 'completed', stop: { kind: 'paused' } });
    // The first reply and five continuations.
    expect(fixture.server.requests).toHaveLength(3 + 6);
  });
});
