import type { EventOf, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { projectPayload, selectView } from '../projection/projectPayload.js';
import type { Payload } from '../../common/payload.js';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system.js';

/** Everything the inspector shows about one compaction. */
export type CompactionRecord = {
  seq: number;
  at: string;
  fromSeq: number;
  through: number;
  summary: string;
  /** The first user message, kept verbatim outside the summary. */
  pinned: string;
  tokensBefore?: number;
  tokensAfter?: number;
  model?: string;
  /** Seq of the compaction this one re-ran. */
  supersedes?: number;
  /** `in_effect`: the projection uses it now; `superseded`: a later compaction covers as much or more. */
  status: 'in_effect' | 'superseded';
  /** The later compaction that took its place (the earliest one reaching at least as far). */
  supersededBy?: number;
  /** The exact events it replaced: every event with fromSeq <= seq <= through, as stored. */
  replaced: { fromSeq: number; through: number; events: SessionEvent[] };
  /** The payload the next turn would send if this compaction had never been appended. */
  payloadWithout: Payload;
};

/** Options of the inspector. */
export type InspectOptions = {
  /** System prompt for the rebuilt payloads (defaults to the session's pinned prompt, else Keel's). */
  system?: string;
};

/**
 * Every compaction of a log, oldest first, with its summary, pinned goal, the events it replaced, its
 * token counts, whether it is in effect, and the payload rebuilt without it. Pure, O(events ×
 * compactions); nothing is ever hidden: superseded compactions and the originals stay visible.
 */
export function inspectCompactions(
  events: readonly SessionEvent[],
  options: InspectOptions = {},
): CompactionRecord[] {
  const created = events.find((event) => event.kind === 'session_created');
  const system =
    options.system ??
    (created?.kind === 'session_created' ? created.systemPrompt : undefined) ??
    DEFAULT_SYSTEM_PROMPT;
  const compactions = events.filter((event): event is EventOf<'compaction'> => event.kind === 'compaction');
  const inEffect = selectView(events).compaction?.seq;
  const firstSeq = events.find((event) => event.kind !== 'session_created')?.seq ?? 1;
  return compactions.map((compaction) => {
    const fromSeq = compaction.fromSeq ?? firstSeq;
    const successor = compactions.find(
      (other) => other.seq > compaction.seq && other.through >= compaction.through,
    );
    const record: CompactionRecord = {
      seq: compaction.seq,
      at: compaction.at,
      fromSeq,
      through: compaction.through,
      summary: compaction.summary,
      pinned: compaction.pinned,
      status: compaction.seq === inEffect ? 'in_effect' : 'superseded',
      replaced: {
        fromSeq,
        through: compaction.through,
        events: events.filter((event) => event.seq >= fromSeq && event.seq <= compaction.through),
      },
      payloadWithout: projectPayload(events, { system, withoutCompaction: compaction.seq }),
    };
    if (compaction.tokensBefore !== undefined) record.tokensBefore = compaction.tokensBefore;
    if (compaction.tokensAfter !== undefined) record.tokensAfter = compaction.tokensAfter;
    if (compaction.model !== undefined) record.model = compaction.model;
    if (compaction.supersedes !== undefined) record.supersedes = compaction.supersedes;
    if (record.status === 'superseded') {
      // Not in effect means some later compaction reaches at least as far (largest through wins).
      const by = successor?.seq ?? inEffect;
      if (by !== undefined) record.supersededBy = by;
    }
    return record;
  });
}

/** inspectCompactions over a session's log (read in one pass; works on a log opened read-only). */
export function inspectSessionCompactions(log: SessionLog, options: InspectOptions = {}): CompactionRecord[] {
  return inspectCompactions(log.read(), options);
}
