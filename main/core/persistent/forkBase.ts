// A fork's view of its folders: the project as it was at the fork point, built from the recorded changes the
// parent made after it (taken out three-way, as a revert would, but in the fork's checkout only: the project
// and the parent are never written). Applied after every reset of the fork's checkouts. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ChangesReverted, PersistentCommit, type SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { Checkout } from './checkout.js';
import { historyDir, historyStoreOf } from '../paths.js';
import { isChangeEvent, type ChangeEvent } from '../history/changes.js';
import { planRevert, type RevertConflict } from '../history/plan.js';

const ForkBase = z.object({
  version: z.literal(1),
  /** The changes to take out of the fork's checkouts, oldest first (the parent's, and its own fork base's). */
  changes: z.array(z.discriminatedUnion('kind', [PersistentCommit, ChangesReverted])),
});

/** Where a fork keeps what its checkouts take out: `<dataDir>/history/fork-base.json`. */
function forkBaseFile(dataDir: string): string {
  return path.join(historyDir(dataDir), 'fork-base.json');
}

/** The changes a session's checkouts take out (none for a session that is not a fork, or forked at its end). */
export function readForkBase(dataDir: string): ChangeEvent[] {
  let text: string;
  try {
    text = fs.readFileSync(forkBaseFile(dataDir), 'utf8');
  } catch {
    return [];
  }
  // Keel wrote it: one that does not parse is a damaged session folder, said as such rather than ignored.
  const parsed = ForkBase.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${forkBaseFile(dataDir)} is damaged; the fork cannot show its point`);
  return parsed.data.changes;
}

/**
 * What a fork at `at` takes out: the parent's own fork base, then every change the parent recorded after `at`
 * (set aside by a rewind or not: they all reached the folder), in the order they were made.
 */
export function forkBaseOf(
  parentDataDir: string,
  parentEvents: readonly SessionEvent[],
  at: number,
): ChangeEvent[] {
  const later = parentEvents.filter(
    (e): e is ChangeEvent => isChangeEvent(e) && e.seq > at && e.files.length > 0,
  );
  return [...readForkBase(parentDataDir), ...later];
}

/** Writes a fork's base into its new session folder (before its log exists: the import's `files` step). */
export function writeForkBase(dataDir: string, changes: readonly ChangeEvent[]): void {
  if (changes.length === 0) return;
  const file = forkBaseFile(dataDir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ version: 1, changes }));
}

/** Resets a checkout to its backing folder; a fork's then shows its fork point (applyForkBase). */
export async function resetCheckout(log: SessionLog, checkout: Checkout): Promise<void> {
  await checkout.reset();
  await applyForkBase(log, checkout);
}

/**
 * Right after a reset of one of a fork's checkouts: takes the fork base's changes of that dir out of it (the
 * result is the checkout's baseline, so the fork's commits carry only its own work). A file changed since on
 * the same lines keeps the project's version; those are returned (and traced).
 */
export async function applyForkBase(log: SessionLog, checkout: Checkout): Promise<RevertConflict[]> {
  const changes = readForkBase(log.dir).filter((change) => change.dir === checkout.spec.name);
  if (changes.length === 0) return [];
  const started = Date.now();
  // A view's files are read through its holder (checkout.mount: the checkout itself for a copy).
  const plan = await planRevert(await checkout.mount(), historyStoreOf(log.dir), changes);
  await checkout.overlay(
    plan.writes.map((write) => ({
      path: write.path,
      to: write.to === null ? null : { mode: write.to.mode, bytes: write.to.bytes },
    })),
  );
  try {
    log.appendTrace({
      turn: log.countOfKind('user_message') + 1,
      stage: 'fork_base',
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      detail: {
        dir: checkout.spec.name,
        files: plan.writes.length,
        kept: plan.conflicts.map((c) => ({ path: c.path, reason: c.reason })),
      },
    });
  } catch {
    // Trace is observability only.
  }
  return plan.conflicts;
}
