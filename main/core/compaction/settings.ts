import { z } from 'zod';
import type { EventOf } from '../../common/events.js';

/** When to compact and how much to keep; the same ranges settings.json accepts. */
export const CompactionSettings = z
  .object({
    /** Fraction of the context window at which to compact; 0 turns automatic compaction off. */
    threshold: z.number().min(0).max(0.95),
    /** Fraction of the window kept verbatim after a compaction (the most recent events). */
    keepRecent: z.number().min(0).max(0.5),
  })
  .strict();
export type CompactionSettings = z.infer<typeof CompactionSettings>;

/** Compact at 75% of the window, keep the newest 20% verbatim. */
export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = { threshold: 0.75, keepRecent: 0.2 };

/** A session's own override, in `session_created.metadata.compaction`; either field may be left out. */
export const SessionCompactionOverride = CompactionSettings.partial();

/**
 * The settings a session runs with: its own override (session_created.metadata.compaction) over the
 * global ones (settings.json's `compaction`) over the defaults. An override that does not parse is
 * ignored rather than blocking the session, and the global value applies.
 */
export function resolveCompactionSettings(
  global: Partial<CompactionSettings> | undefined,
  created?: Pick<EventOf<'session_created'>, 'metadata'>,
): CompactionSettings {
  // The module's partial schema: building one per call (and its first parse) cost ~0.3 ms a turn.
  const base = { ...DEFAULT_COMPACTION_SETTINGS, ...SessionCompactionOverride.parse(global ?? {}) };
  const override = SessionCompactionOverride.safeParse(created?.metadata?.['compaction'] ?? {});
  return override.success ? { ...base, ...override.data } : base;
}
