import type { EventOf, SessionEvent, Usage } from '../../common/events.js';
import type { CostReport, Spent } from '../../common/costSchema.js';
import { costOf, costParts, PRICES_AS_OF } from '../../providers/catalogue.js';
import { usageTokens } from '../turn/budget.js';
import { capsAfter } from '../turn/state.js';
import type { Caps } from '../turn/budget.js';

/** A subagent's spend as read from its own log. */
export type ChildSpend = { childId: string; task: string; requests: number } & Spent;

/** Nothing spent, price known. */
export function zeroSpent(): Spent {
  return { tokens: 0, usd: 0, usdKnown: true };
}

function add(into: Spent, tokens: number, usd: number | undefined): void {
  into.tokens += tokens;
  if (usd === undefined) into.usdKnown = false;
  else into.usd += usd;
}

/**
 * Where a session's money went, from its events (every one, rewound ones too: that money was spent) and its
 * children's spend: by kind, by turn, by model, by subagent, the cache hit rate and the caps. Each request is
 * priced for the model that answered it, at the catalogue's list prices of PRICES_AS_OF. Pure.
 */
export function costReport(events: readonly SessionEvent[], children: readonly ChildSpend[]): CostReport {
  const created = events[0]?.kind === 'session_created' ? events[0] : undefined;
  let model = created?.model ?? 'unknown';
  let caps: Caps = {};
  const byKind = {
    input: zeroSpent(),
    cacheRead: zeroSpent(),
    cacheWrite: zeroSpent(),
    output: zeroSpent(),
    reasoning: zeroSpent(),
    compaction: zeroSpent(),
  };
  const turns = new Map<
    number,
    Spent & { turn: number; requests: number; startedAt?: string; lastAt?: string }
  >();
  const models = new Map<string, Spent & { model: string; requests: number }>();
  let turn = 0;
  let requests = 0;
  let estimated = 0;
  let unpriced = 0;
  let prompt = 0;
  let cacheRead = 0;
  const turnOf = (at: string) => {
    let entry = turns.get(turn);
    if (!entry) {
      entry = { turn, requests: 0, ...zeroSpent() };
      turns.set(turn, entry);
    }
    entry.lastAt = at;
    return entry;
  };
  const charge = (usage: Usage, by: string, at: string, kind: 'request' | 'compaction') => {
    const usd = costOf(usage, by);
    if (usd === undefined) unpriced += 1;
    const tokens = usageTokens(usage);
    const entry = turnOf(at);
    add(entry, tokens, usd);
    let perModel = models.get(by);
    if (!perModel) {
      perModel = { model: by, requests: 0, ...zeroSpent() };
      models.set(by, perModel);
    }
    perModel.requests += 1;
    add(perModel, tokens, usd);
    if (kind === 'compaction') {
      add(byKind.compaction, tokens, usd);
      return;
    }
    entry.requests += 1;
    requests += 1;
    if (usage.estimated) estimated += 1;
    const parts = costParts(usage, by);
    add(byKind.input, usage.inputTokens, parts?.input);
    add(byKind.cacheRead, usage.cacheReadTokens ?? 0, parts?.cacheRead);
    add(byKind.cacheWrite, usage.cacheWriteTokens ?? 0, parts?.cacheWrite);
    add(byKind.output, usage.outputTokens, parts?.output);
    add(byKind.reasoning, usage.reasoningTokens ?? 0, parts?.reasoning);
    prompt += usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
    cacheRead += usage.cacheReadTokens ?? 0;
  };
  for (const event of events) {
    switch (event.kind) {
      case 'user_message':
        turn += 1;
        turnOf(event.at).startedAt = event.at;
        break;
      case 'model_changed':
        model = event.model;
        break;
      case 'budget_set':
        caps = capsAfter(caps, event);
        break;
      case 'assistant_message':
        if (event.usage) charge(event.usage, event.model ?? model, event.at, 'request');
        break;
      case 'compaction':
        if (event.usage) charge(event.usage, event.model ?? model, event.at, 'compaction');
        break;
      default:
        break;
    }
  }
  const own = zeroSpent();
  for (const entry of turns.values()) add(own, entry.tokens, entry.usdKnown ? entry.usd : undefined);
  const total = { ...own };
  for (const child of children) add(total, child.tokens, child.usdKnown ? child.usd : undefined);
  // A turn's partial sums stay when some price is unknown: `usdKnown` says they are a floor.
  for (const entry of turns.values()) if (!entry.usdKnown) own.usdKnown = false;
  const byTurn = [...turns.values()]
    .filter((entry) => entry.turn > 0 || entry.tokens > 0)
    .sort((a, b) => a.turn - b.turn);
  const latest = byTurn.at(-1);
  return {
    sessionId: created?.sessionId ?? 'unknown',
    pricesAsOf: PRICES_AS_OF,
    caps,
    total,
    byKind,
    byTurn: byTurn.map(({ lastAt: _lastAt, ...entry }) => entry),
    byModel: [...models.values()],
    bySubagent: [...children],
    cacheHitRate: prompt === 0 ? null : cacheRead / prompt,
    requests,
    estimatedRequests: estimated,
    unpricedRequests: unpriced,
    ...(latest?.startedAt && latest.lastAt
      ? {
          latestTurn: {
            turn: latest.turn,
            startedAt: latest.startedAt,
            lastAt: latest.lastAt,
            tokens: latest.tokens,
            usd: latest.usd,
          },
        }
      : {}),
  };
}

/** The subagent_started events of a session, newest task per child. */
export function childrenOf(events: readonly SessionEvent[]): EventOf<'subagent_started'>[] {
  const seen = new Map<string, EventOf<'subagent_started'>>();
  for (const event of events) if (event.kind === 'subagent_started') seen.set(event.childId, event);
  return [...seen.values()];
}
