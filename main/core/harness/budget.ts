import type { EventOf } from '../../common/events.js';
import type { CostReport } from '../../common/costSchema.js';
import { SessionLog, SessionNotFoundError } from '../log/sessionLog.js';
import { childrenOf, costReport, type ChildSpend } from '../trace/cost.js';
import { addSpend, emptySpend } from '../turn/budget.js';
import { HarnessError } from './errors.js';
import { withWritableSession } from './lock.js';

/** A change of a session's caps: a number sets that cap, null removes it, absent leaves it. */
export type BudgetChange = { usd?: number | null; tokens?: number | null };

/**
 * Records a change of the session's spend caps (`budget_set`, source `user`) under its writer lease: a turn
 * running in this process is waited for, one in another process is a HarnessSessionBusyError. The next request
 * is checked against the new caps, so `keel resume` continues a turn a cap stopped once it is raised.
 */
export async function setBudget(
  home: string,
  sessionId: string,
  change: BudgetChange,
): Promise<EventOf<'budget_set'>> {
  if (change.usd === undefined && change.tokens === undefined)
    throw new HarnessError('invalid_input', 'give a USD cap, a token cap, or both (none removes one)');
  for (const [name, value] of Object.entries(change))
    if (typeof value === 'number' && (!Number.isFinite(value) || value < 0))
      throw new HarnessError('invalid_input', `the ${name} cap must be a number of 0 or more (got ${value})`);
  if (typeof change.tokens === 'number' && !Number.isInteger(change.tokens))
    throw new HarnessError('invalid_input', `the token cap must be a whole number (got ${change.tokens})`);
  return withWritableSession(home, sessionId, (log) => {
    const appended = log.append(
      {
        kind: 'budget_set',
        ...(change.usd === undefined ? {} : { usd: change.usd }),
        ...(change.tokens === undefined ? {} : { tokens: change.tokens }),
        source: 'user',
      },
      { expectedLastSeq: log.lastSeq() },
    );
    if (!appended.ok) throw new Error(`session ${sessionId} changed while its budget was set; try again`);
    return Promise.resolve(appended.events[0] as EventOf<'budget_set'>);
  });
}

/**
 * Where a session's money went (`keel cost`, the app's header and trace view): its own log read whole, each
 * subagent's spend from the child's own log. Opens logs for reading only, so a running session can be asked.
 */
export function sessionCost(home: string, sessionId: string): CostReport {
  const log = SessionLog.open(home, sessionId, { write: false });
  try {
    const events = log.read({ validate: false });
    const children = childrenOf(events).map((started) => childSpend(home, started));
    return costReport(events, children);
  } finally {
    log.close();
  }
}

/** A child's spend, from its log's recorded usage (a child never created spent nothing). */
function childSpend(home: string, started: EventOf<'subagent_started'>): ChildSpend {
  const spent: ChildSpend = {
    childId: started.childId,
    task: started.task,
    requests: 0,
    tokens: 0,
    usd: 0,
    usdKnown: true,
  };
  let log: SessionLog;
  try {
    log = SessionLog.open(home, started.childId, { write: false });
  } catch (error) {
    if (error instanceof SessionNotFoundError) return spent;
    throw error;
  }
  try {
    const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
    const model = created?.kind === 'session_created' ? created.model : 'unknown';
    const spend = emptySpend();
    const records = log.usageRecords();
    for (const record of records)
      addSpend(
        spend,
        record.kind === 'compaction' ? 'compaction' : 'requests',
        record.usage,
        record.model ?? model,
      );
    spent.requests = records.filter((record) => record.kind === 'assistant_message').length;
    spent.tokens = spend.requests.tokens + spend.compaction.tokens;
    spent.usd = spend.requests.usd + spend.compaction.usd;
    spent.usdKnown = spend.unpriced === 0;
    return spent;
  } finally {
    log.close();
  }
}
