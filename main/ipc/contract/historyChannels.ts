import { z } from 'zod';
import { ChangesReverted, Rewound, UserSnapshot, UserSnapshotRestored } from '../../common/events.js';
import { sessionId, seq, type ChannelSpec } from './schemas.js';

/** A file a revert cannot undo onto the folder as it is now, with why and (text files) the three versions. */
export const RevertConflict = z.object({
  dir: z.string(),
  path: z.string(),
  reason: z.string(),
  /** The folder's version now, the change's version (after) and the one before it, for a diff editor. */
  sides: z.object({ current: z.string(), changed: z.string(), original: z.string() }).optional(),
});
export type RevertConflict = z.infer<typeof RevertConflict>;

const Conflicted = z.object({ status: z.literal('conflict'), conflicts: z.array(RevertConflict) });

/** What a revert did: files written (one changes_reverted per folder), a conflict (nothing written), or nothing to do. */
export const RevertOutcome = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('reverted'),
    events: z.array(ChangesReverted),
    files: z.array(z.object({ dir: z.string(), path: z.string() })),
    /** The user's work in each folder, kept just before the revert wrote (restorable). */
    snapshots: z.array(UserSnapshot).default([]),
  }),
  Conflicted,
  z.object({ status: z.literal('unchanged'), reverts: z.array(seq) }),
]);
export type RevertOutcome = z.infer<typeof RevertOutcome>;

/** The channels of a session's history: undoing a turn's changes, rewinding, forking (main/core/history). */
export const historyChannels = {
  'history.revert': {
    doc: "Undoes a turn's changes to the project (or one recorded change: a persistent_commit or changes_reverted seq) onto the folder as it is now; a conflict writes nothing and lists each file.",
    input: z
      .object({ sessionId, turn: z.number().int().positive().optional(), seq: seq.optional() })
      .refine((input) => (input.turn === undefined) !== (input.seq === undefined), 'name a turn or a seq'),
    output: RevertOutcome,
  },
  'history.rewind': {
    doc: 'The conversation continues from `toSeq` (the event just before a user message; later events kept, set aside); `files` reverts their changes to the project first.',
    input: z.object({ sessionId, toSeq: seq, files: z.boolean().default(false) }),
    output: z.discriminatedUnion('status', [
      z.object({ status: z.literal('rewound'), event: Rewound, revert: RevertOutcome.optional() }),
      z.object({ status: z.literal('conflict'), revert: Conflicted }),
    ]),
  },
  'history.fork': {
    doc: "A new session starting with this one's events up to `at` (default: all; else the event just before a user message), same model and folders.",
    input: z.object({ sessionId, at: seq.optional() }),
    output: z.object({
      id: z.string(),
      parentId: z.string(),
      at: seq,
      events: z.number().int().nonnegative(),
      /** Said when the fork's folder cannot be shown as at `at` (a --commit direct session). */
      notice: z.string().optional(),
    }),
  },
  'history.snapshots': {
    doc: "The snapshots of the user's work Keel kept before writing into the session's folders (oldest first), each with the seq of its last restore.",
    input: z.object({ sessionId }),
    output: z.array(z.object({ event: UserSnapshot, restoredAt: seq.optional() })),
  },
  'history.restoreSnapshot': {
    doc: "Writes a snapshot's files back into its folder (what the folder holds there now is kept first as a new snapshot); `refused` names files whose bytes were not kept, nothing written.",
    input: z.object({ sessionId, seq }),
    output: z.discriminatedUnion('status', [
      z.object({
        status: z.literal('restored'),
        event: UserSnapshotRestored,
        snapshot: UserSnapshot.optional(),
        files: z.array(z.string()),
      }),
      z.object({ status: z.literal('unchanged') }),
      z.object({ status: z.literal('refused'), conflicts: z.array(RevertConflict.omit({ dir: true })) }),
    ]),
  },
} as const satisfies Record<string, ChannelSpec>;
