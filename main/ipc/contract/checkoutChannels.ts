import { z } from 'zod';

/*
 * Issue 36: Settings → Checkout storage. The same core functions as `keel gc` (harness/checkoutStorage.ts):
 * `checkouts.storage` lists the sessions' checkouts and their sizes, `checkouts.collect` reclaims idle ones;
 * `checkouts.kind` / `checkouts.setKind` show and set what new sessions' checkouts are (harness/checkoutKind.ts).
 */

const KindSetting = z.enum(['auto', 'copy', 'view']);

const KindReport = z.object({
  setting: KindSetting,
  forced: KindSetting.optional(),
  auto: z.enum(['copy', 'view']),
  support: z.object({ available: z.boolean(), reason: z.string() }),
  newSessions: z.enum(['copy', 'view']),
  explanation: z.string(),
});

const Entry = z.object({
  sessionId: z.string(),
  dir: z.string(),
  bytes: z.number().nonnegative(),
  lastActive: z.string(),
  action: z.enum(['reclaimed', 'would reclaim', 'kept']),
  reason: z.string().optional(),
});

const Report = z.object({
  totalBytes: z.number().nonnegative(),
  reclaimedBytes: z.number().nonnegative(),
  limitBytes: z.number().nonnegative(),
  entries: z.array(Entry),
});

export const checkoutChannels = {
  'checkouts.storage': {
    doc: "The sessions' checkouts of their Persistent Dirs, their disk use (as last measured) and the bound (settings.json checkouts.storageLimitMB); removes nothing.",
    input: z.object({}),
    output: Report,
  },
  'checkouts.collect': {
    doc: 'Reclaims the checkouts of sessions idle for checkouts.idleMinutes, keeping any with uncommitted changes or anything owed (as keel gc); dryRun lists only.',
    input: z.object({ dryRun: z.boolean().optional() }),
    output: Report,
  },
  'checkouts.kind': {
    doc: "What new sessions' checkouts are: settings.json checkouts.kind (auto, copy, view), KEEL_CHECKOUT_KIND when it overrides it, whether this machine can give a copy-on-write view (the overlay probe's sentence) and the kind that results; changes nothing.",
    input: z.object({}),
    output: KindReport,
  },
  'checkouts.setKind': {
    doc: "Saves settings.json checkouts.kind (the rest of the file kept) and returns what new sessions' checkouts are now; existing checkouts keep their kind.",
    input: z.object({ kind: KindSetting }),
    output: KindReport,
  },
};
