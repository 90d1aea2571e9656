import { useCallback, useState } from 'react';
import type { ChannelOutput } from '../../../../../main/ipc/contract.js';
import { call, describeError } from '../../../api/call.js';
import { keel } from '../../../api/keel.js';

type RevertOutcome = ChannelOutput<'history.revert'>;
/** The files a revert could not undo onto the folder as it is now (nothing was written). */
export type RevertConflicts = Extract<RevertOutcome, { status: 'conflict' }>['conflicts'];

/** What the transcript's history buttons call; `busy` while one runs (the others wait). */
export type HistoryActions = {
  busy: boolean;
  /** False while a turn runs or the session is read-only: the buttons are disabled. */
  enabled: boolean;
  revert: (target: { turn: number } | { seq: number }) => void;
  /** `prompt`: the message rewound to, given back to the composer once the rewind is recorded. */
  rewind: (toSeq: number, files: boolean, prompt?: string) => void;
  /** `at` undefined: the whole conversation. */
  fork: (at?: number) => void;
  /** Writes a snapshot of the user's work (a user_snapshot seq) back into its folder. */
  restoreSnapshot: (seq: number) => void;
};

/** The result the session view shows: conflicts in their panel, a sentence, or an error. */
export type HistoryState = {
  conflicts?: { what: string; files: RevertConflicts };
  notice?: string;
  error?: string;
};

/**
 * Undo a turn's changes, rewind, fork: the calls behind the transcript's buttons (history.* channels). Success
 * shows in the transcript itself (changes_reverted, the rewound fold) or opens the fork; a conflict or refusal
 * is kept here for the session view to show.
 */
export function useHistoryActions(
  sessionId: string,
  enabled: boolean,
  openSession: (id: string) => void,
  /** Re-reads the session's summary: main counted it busy while the call ran, and a rewind changes what it offers. */
  afterCall: () => void,
  /** A rewind to before a message succeeded: its text goes back to the composer, to edit and send again. */
  onRewound?: (prompt: string) => void,
): { actions: HistoryActions; state: HistoryState; dismiss: () => void } {
  const [busy, setBusy] = useState(false);
  const [state, setState] = useState<HistoryState>({});

  const run = useCallback(
    async (work: () => Promise<HistoryState>) => {
      setBusy(true);
      setState({});
      try {
        setState(await work());
      } catch (error) {
        setState({ error: describeError(error) });
      } finally {
        setBusy(false);
        afterCall();
      }
    },
    [afterCall],
  );

  const revert = useCallback(
    (target: { turn: number } | { seq: number }) =>
      void run(async () => {
        const outcome = await call(keel().history.revert({ sessionId, ...target }));
        const what = 'turn' in target ? `turn ${target.turn}` : 'this change';
        if (outcome.status === 'conflict') return { conflicts: { what, files: outcome.conflicts } };
        if (outcome.status === 'unchanged')
          return { notice: `Nothing to undo: the changes of ${what} are already reverted.` };
        return {};
      }),
    [run, sessionId],
  );

  const rewind = useCallback(
    (toSeq: number, files: boolean, prompt?: string) =>
      void run(async () => {
        const outcome = await call(keel().history.rewind({ sessionId, toSeq, files }));
        if (outcome.status === 'conflict')
          return {
            conflicts: { what: 'the changes after this point', files: outcome.revert.conflicts },
            notice: 'Not rewound: undoing the later changes to the files would conflict.',
          };
        if (prompt !== undefined) onRewound?.(prompt);
        return {};
      }),
    [run, sessionId, onRewound],
  );

  const fork = useCallback(
    (at?: number) =>
      void run(async () => {
        const report = await call(keel().history.fork({ sessionId, ...(at !== undefined ? { at } : {}) }));
        openSession(report.id);
        return {};
      }),
    [openSession, run, sessionId],
  );

  const restoreSnapshot = useCallback(
    (seq: number) =>
      void run(async () => {
        const outcome = await call(keel().history.restoreSnapshot({ sessionId, seq }));
        if (outcome.status === 'unchanged')
          return { notice: 'Nothing to restore: the folder already holds these files.' };
        if (outcome.status === 'refused')
          return {
            error: `Not restored: ${outcome.conflicts.map((c) => `${c.path}: ${c.reason}`).join('; ')}`,
          };
        return {
          notice:
            `Restored ${outcome.files.length} file${outcome.files.length === 1 ? '' : 's'} (${outcome.files.join(', ')}).` +
            // Issue #37: in the user's terms (the snapshot is the new row in the transcript), no event numbers.
            (outcome.snapshot
              ? ' What was there is kept too: it shows in the conversation, to restore.'
              : ''),
        };
      }),
    [run, sessionId],
  );

  return {
    actions: { busy, enabled, revert, rewind, fork, restoreSnapshot },
    state,
    dismiss: useCallback(() => setState({}), []),
  };
}
