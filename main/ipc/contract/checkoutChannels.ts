import { z } from 'zod';

/*
 * Issue 36: Settings → Checkout storage. The same core functions as `keel gc` (harness/checkoutStorage.ts):
 * `checkouts.storage` lists the sessions' checkouts and their sizes, `checkouts.collect` reclaims idle ones.
 */

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
};
