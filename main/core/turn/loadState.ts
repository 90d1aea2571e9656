import type { EventKind, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { visibleEvents } from '../projection/rewind.js';
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
];

/**
 * The same state `foldSession(log.read())` gives, read with index lookups instead of decoding the whole
 * log: session_created, every pin/policy/approval event, and the tail from the newest user or assistant
 * message (the current turn, its calls and their results). Turn counts and usage totals are the log's tallies.
 * Costs O(approval events + current turn), so a turn's overhead does not grow with the session.
 */
export function loadSessionState(log: SessionLog): SessionState {
  if (log.lastSeqOfKind('rewound') !== undefined) {
    // What a rewind set aside depends on the whole log: fold the events in effect (only rewound sessions pay).
    const state = foldSession(visibleEvents(log.read({ validate: false })));
    return withTallies(state, log);
  }
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (created?.kind !== 'session_created') throw new Error(`session ${log.id} has no session_created event`);
  const anchors = [log.lastSeqOfKind('user_message'), log.lastSeqOfKind('assistant_message')].filter(
    (seq): seq is number => seq !== undefined,
  );
  const from = anchors.length > 0 ? Math.min(...anchors) : 2;
  const tail = log.read({ fromSeq: Math.max(2, from), validate: false });
  const earlier = log.readKinds(STATE_KINDS, { validate: false }).filter((event) => event.seq < from);
  const events: SessionEvent[] = [created, ...earlier, ...tail];
  return withTallies(foldSession(events), log);
}

/** Turn count and usage totals over the whole log, from the log's tallies (kept current, not summed per turn). */
function withTallies(state: SessionState, log: SessionLog): SessionState {
  const { userMessages, usage } = log.tallies();
  state.turns = userMessages;
  state.totals = { ...usage };
  state.lastSeq = log.lastSeq();
  return state;
}
