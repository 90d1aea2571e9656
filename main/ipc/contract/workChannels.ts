import { z } from 'zod';
import { Compaction } from '../../common/events.js';
import {
  sessionId,
  seq,
  CompactionSummary,
  PersistentFileChange,
  PersistentCommitReport,
  PayloadText,
  FileVersions,
  NewTurnEffect,
  type ChannelSpec,
} from './schemas.js';

/** The channels of compactions and Persistent Dir review. */
export const workChannels = {
  'compactions.list': {
    doc: 'The compactions of a session, oldest first.',
    input: z.object({ sessionId }),
    output: z.object({ compactions: z.array(CompactionSummary) }),
  },
  'compactions.inspect': {
    doc: 'One compaction: its summary, pinned goal and the range of original events it replaces.',
    input: z.object({ sessionId, seq }),
    output: z.object({
      compaction: Compaction,
      summary: CompactionSummary,
      /** How many original events the summary stands for (they stay in the log). */
      replacedCount: z.number().int().nonnegative(),
    }),
  },
  'compactions.payload': {
    doc: 'The payload the next turn would send now, and the same payload rebuilt without compaction `seq`, as text for a diff editor.',
    input: z.object({ sessionId, seq }),
    output: z.object({ current: PayloadText, without: PayloadText }),
  },
  'compactions.run': {
    doc: 'Compacts the session now from its original events (or re-runs compaction `rerun` over the same range); `busy` while a turn runs.',
    input: z.object({ sessionId, rerun: seq.optional() }),
    output: z.discriminatedUnion('status', [
      z.object({ status: z.literal('compacted'), compaction: Compaction }),
      /** Nothing old enough to summarize yet. */
      z.object({ status: z.literal('skipped'), reason: z.string() }),
    ]),
  },
  'persistent.diff': {
    doc: "The uncommitted changes of the session's Persistent Dir checkouts (all, or one dir), with a unified diff against the project folder.",
    input: z.object({ sessionId, dir: z.string().min(1).optional() }),
    output: z.object({
      /** False for a session that works on its project folder directly (nothing to review). */
      hasCheckouts: z.boolean(),
      dirs: z.array(
        z.object({
          dir: z.string(),
          /** `manual`: changes wait for persistent.apply; `auto`: committed when a turn ends. */
          commit: z.enum(['auto', 'manual']),
          /** Read-only for this session: its changes are never committed. */
          readOnly: z.boolean(),
          /** What the next new turn does to these changes. */
          onNewTurn: NewTurnEffect,
          files: z.array(PersistentFileChange),
          diff: z.string(),
        }),
      ),
      /** Set when a new turn would be refused or would discard changes: the sentence to warn with. */
      newTurnWarning: z.string().nullable(),
    }),
  },
  'persistent.file': {
    doc: "One changed file's two texts for a diff editor: uncommitted (project folder vs checkout) or, with commitSeq, before/after a persistent_commit.",
    input: z.object({
      sessionId,
      dir: z.string().min(1),
      path: z.string().min(1).max(4096),
      /** Seq of a persistent_commit event: the file as that commit changed it. Absent: the uncommitted change. */
      commitSeq: seq.optional(),
    }),
    output: FileVersions,
  },
  'persistent.history': {
    doc: "What each turn changed in the session's Persistent Dirs and committed (persistent_commit events, grouped by turn).",
    input: z.object({ sessionId }),
    output: z.object({
      turns: z.array(
        z.object({
          /** Turn N: the Nth user message and what followed it (0: before the first prompt). */
          turn: z.number().int().nonnegative(),
          /** The prompt, first 200 characters. */
          prompt: z.string().optional(),
          commits: z.array(
            z.object({
              seq,
              at: z.string(),
              dir: z.string(),
              files: z.array(PersistentFileChange),
              diffArtifact: z.string().optional(),
            }),
          ),
        }),
      ),
    }),
  },
  'persistent.apply': {
    doc: 'Commits the uncommitted changes of the named dirs (default: every manual one) to their folders, three-way merged; records persistent_commit.',
    input: z.object({ sessionId, dirs: z.array(z.string().min(1)).optional() }),
    output: z.object({ reports: z.array(PersistentCommitReport) }),
  },
  'persistent.discard': {
    doc: 'Throws away the uncommitted changes of the named dirs (default: every manual one); returns the dirs reset.',
    input: z.object({ sessionId, dirs: z.array(z.string().min(1)).optional() }),
    output: z.object({ discarded: z.array(z.string()) }),
  },
} as const satisfies Record<string, ChannelSpec>;
