import type { EventKind, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { addSpend, emptySpend, hasCaps, type Spend } from './budget.js';
import { foldSession, type SessionState } from './state.js';

/** Kinds whose every occurrence shapes the state (pin, policy, grants); they are few in any session. */
const STATE_KINDS: readonly EventKind[] = [
  'model_changed',
  'reasoning_changed',
  'policy_changed',
  'approval_request',
  'approval_granted',
  'approval_denied',
  'approval_revoked',
  'tool_rules_applied',
  'budget_set',
  'subagent_started',
  'permission_rules_applied',
  // issue #30: plan mode and a plan's decisions (they set the policy)
  'plan_mode_changed',
  'plan_approved',
  'plan_rejected',
];

/**
 * The same state `foldSession(log.read())` gives, read with index lookups instead of decoding the whole
 * log: session_created, every pin/policy/approval event, and the tail from the newest user or assistant
 * message (the current turn, its calls and their results), leaving out what rewinds set aside. Turn counts and
 * usage totals are the log's tallies. Costs O(approval events + rewinds + current turn), so a turn's overhead does
 * not grow with the session, rewound or not.
 */
export function loadSessionState(log: SessionLog, options: { spend?: boolean } = {}): SessionState {
  // A rewind sets aside the events between its toSeq and itself: the state folds only the events in effect.
  const hidden = setAside(log);
  const visible = (event: SessionEvent) =>
    !hidden.some(([after, before]) => event.seq > after && event.seq < before);
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (created?.kind !== 'session_created') throw new Error(`session ${log.id} has no session_created event`);
  const anchors = [
    newestInEffect(log, 'user_message', hidden),
    newestInEffect(log, 'assistant_message', hidden),
  ];
  const found = anchors.filter((seq): seq is number => seq !== undefined);
  const from = found.length > 0 ? Math.min(...found) : 2;
  const tail = log.read({ fromSeq: Math.max(2, from), validate: false }).filter(visible);
  const earlier = log
    .readKinds(STATE_KINDS, { validate: false })
    .filter((event) => event.seq < from && visible(event));
  const state = withTallies(foldSession([created, ...earlier, ...tail]), log);
  // The spend is read only when a cap needs it (or the host asks): one query over the usage of every request.
  if (hasCaps(state.caps) || options.spend === true) state.spend = spendOf(log, state.pin.model);
  return state;
}

/**
 * What a session's own requests and compaction summaries spent, from the usage recorded in its log (every
 * request, rewound ones too), each priced for the model that answered (`fallbackModel` where a message of an
 * older log names none). Recomputed from the log, so a crash loses none of it.
 */
export function spendOf(log: SessionLog, fallbackModel: string): Spend {
  const spend = emptySpend();
  for (const record of log.usageRecords()) {
    addSpend(
      spend,
      record.kind === 'compaction' ? 'compaction' : 'requests',
      record.usage,
      record.model ?? fallbackModel,
    );
  }
  return spend;
}

/**
 * The seq ranges rewinds set aside, as open intervals (toSeq, seq of the rewind): each `rewound` hides every
 * event after its toSeq still in effect, so an event is set aside exactly when one of them contains it (the
 * same events `visibleEvents` drops). Rewinds are few: one index lookup each.
 */
function setAside(log: SessionLog): [number, number][] {
  if (log.lastSeqOfKind('rewound') === undefined) return [];
  return log
    .readKinds(['rewound'], { validate: false })
    .flatMap((event) => (event.kind === 'rewound' ? [[event.toSeq, event.seq] as [number, number]] : []));
}

/** Seq of the newest event of a kind that no rewind set aside (index lookups, stepping over set-aside ranges). */
function newestInEffect(
  log: SessionLog,
  kind: EventKind,
  hidden: readonly [number, number][],
): number | undefined {
  let seq = log.lastSeqOfKind(kind);
  while (seq !== undefined) {
    const at = seq;
    const range = hidden.find(([after, before]) => at > after && at < before);
    if (range === undefined) return seq;
    seq = log.lastSeqOfKind(kind, { before: range[0] + 1 });
  }
  return undefined;
}
/** Turn count and usage totals over the whole log, from the log's tallies (kept current, not summed per turn). */
function withTallies(state: SessionState, log: SessionLog): SessionState {
  const { userMessages, usage } = log.tallies();
  state.turns = userMessages;
  state.totals = { ...usage };
  state.lastSeq = log.lastSeq();
  return state;
}
