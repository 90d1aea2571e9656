// Rewinding a conversation: a `rewound` event makes it continue from an earlier point (nothing is deleted);
// with files, the folders' changes made after that point are reverted first. The one implementation the
// CLI (`keel rewind`) and the app ("Rewind to here") call. See README.md.
import type { EventOf, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { rewindProblem } from '../projection/rewind.js';
import { RevertTargetError } from './changes.js';
import { completePendingRevert, revertChanges, type RevertReport } from './revert.js';

/** What a rewind did: `rewound` (with the revert of the files when asked), or `conflict`: nothing was done. */
export type RewindReport =
  | { status: 'rewound'; event: EventOf<'rewound'>; revert?: RevertReport }
  | { status: 'conflict'; revert: Extract<RevertReport, { status: 'conflict' }> };

/**
 * Makes the conversation continue from `toSeq` (the last event before one of the user's messages): appends a
 * `rewound` event; the events after it stay in the log, set aside. With `files`, what the turns after it
 * committed to the folders is reverted first (three-way onto the folders as they are now, the user's edits
 * kept); on a conflict nothing is written and the conversation is not rewound. Throws RevertTargetError
 * naming the seqs that can be chosen when `toSeq` is not such a point.
 */
export async function rewindSession(
  log: SessionLog,
  options: { toSeq: number; files?: boolean; onEvent?: (event: SessionEvent) => void },
): Promise<RewindReport> {
  await completePendingRevert(log);
  // A pending approval would stay pending in the session list and the approvals it lists after the rewind
  // set its call aside: it is answered first.
  if (log.indexStatus() === 'awaiting_approval') {
    throw new RevertTargetError(
      'an approval is pending in this session: approve or deny it first (keel approve / keel deny), then rewind',
    );
  }
  const problem = rewindProblem(log.read({ validate: false }), options.toSeq);
  if (problem !== undefined) throw new RevertTargetError(`cannot rewind to ${options.toSeq}: ${problem}`);
  let revert: RevertReport | undefined;
  if (options.files) {
    revert = await revertChanges(
      log,
      { after: options.toSeq },
      options.onEvent ? { onEvent: options.onEvent } : {},
    );
    if (revert.status === 'conflict') return { status: 'conflict', revert };
  }
  const revertedSeq = revert?.status === 'reverted' ? revert.events[0]?.seq : undefined;
  const result = log.append(
    { kind: 'rewound', toSeq: options.toSeq, ...(revertedSeq !== undefined ? { revertedSeq } : {}) },
    { expectedLastSeq: log.lastSeq() },
  );
  if (!result.ok) throw new Error('the session changed while it was rewound; try again');
  const event = result.events[0] as EventOf<'rewound'>;
  options.onEvent?.(event);
  return { status: 'rewound', event, ...(revert ? { revert } : {}) };
}
