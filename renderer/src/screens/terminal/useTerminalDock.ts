import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { send } from './send.js';
import { useSubscription } from '../../api/useSubscription.js';
import { OutputRouter } from './outputRouter.js';
import type { DockRunInfo } from './runStatus.js';
import type { TerminalLink } from './terminalLink.js';

/** A tab of the dock: one command run, or one interactive shell (its id once terminal.open answered). */
export type DockTab =
  | { kind: 'run'; key: string; toolCallId: string }
  | { kind: 'shell'; key: string; number: number; terminalId?: string; reattached?: boolean };

/** Run tabs kept open; beyond it the oldest finished run's tab is closed. */
const MAX_RUN_TABS = 8;

/** The dock's state and actions, owned by the session view (the dock itself is loaded lazily). */
export type TerminalDock = {
  open: boolean;
  tabs: readonly DockTab[];
  active: string | undefined;
  router: OutputRouter;
  setOpen: (open: boolean) => void;
  setActive: (key: string) => void;
  closeTab: (key: string) => void;
  openShell: () => void;
  /** A shell tab learnt its terminal id (or lost it: undefined). */
  setShellTerminal: (key: string, terminalId: string | undefined) => void;
  link: TerminalLink;
};

/**
 * The session's terminal dock: which runs and shells have tabs, which is shown, and the live output of the
 * session's commands. While the dock is open this page watches the session (tool.watch), so a flooding
 * command waits for the terminal to render its output (acks in xterm's write callback) instead of the UI
 * drowning; closing the dock or leaving the session unwatches. New runs get a tab while the dock is open.
 */
export function useTerminalDock(
  sessionId: string,
  runs: readonly DockRunInfo[],
  sessionRunning: boolean,
): TerminalDock {
  const router = useMemo(
    () =>
      new OutputRouter((toolCallId, chars) => {
        send(keel().tool.outputAck({ sessionId, toolCallId, chars }));
      }),
    [sessionId],
  );
  useEffect(() => () => router.dispose(), [router]);

  const [open, setOpen] = useState(false);
  const [tabs, setTabs] = useState<DockTab[]>([]);
  const [active, setActive] = useState<string | undefined>();
  const shellNumber = useRef(0);

  useSubscription('tool.output', (payload) => {
    if (payload.sessionId === sessionId) router.push(payload.toolCallId, payload.chunk);
  });

  // Flow control only while the dock (the thing that acks) is open.
  useEffect(() => {
    if (!open) return;
    router.watching = true;
    send(keel().tool.watch({ sessionId }));
    return () => {
      router.flush();
      router.watching = false;
      send(keel().tool.unwatch({ sessionId }));
    };
  }, [open, router, sessionId]);

  const addRun = useCallback((toolCallId: string, activate: boolean) => {
    const key = `run:${toolCallId}`;
    setTabs((previous) => {
      if (previous.some((tab) => tab.key === key)) return previous;
      const next: DockTab[] = [...previous, { kind: 'run', key, toolCallId }];
      const runTabs = next.filter((tab) => tab.kind === 'run');
      if (runTabs.length > MAX_RUN_TABS) {
        const drop = runTabs[0];
        return next.filter((tab) => tab !== drop);
      }
      return next;
    });
    if (activate) setActive(key);
  }, []);

  // A command that starts while the dock is open gets its tab, shown unless a shell is in front.
  const runningIds = sessionRunning
    ? runs
        .filter((run) => run.status === 'running' && !run.result)
        .map((run) => run.toolCallId)
        .join('\n')
    : '';
  useEffect(() => {
    if (!open || runningIds === '') return;
    const shellInFront = tabs.find((tab) => tab.key === active)?.kind === 'shell';
    for (const id of runningIds.split('\n')) addRun(id, !shellInFront);
    // Only new running ids matter here, not every tab change.
  }, [open, runningIds]);

  // Shells this page opened earlier in the session (before leaving it) are reattached when the dock opens.
  const reattached = useRef(false);
  useEffect(() => {
    if (!open || reattached.current) return;
    reattached.current = true;
    void call(keel().terminal.list({ sessionId })).then(
      ({ terminals }) => {
        const mine = terminals.filter((terminal) => terminal.mine);
        if (mine.length === 0) return;
        setTabs((previous) => [
          ...previous,
          ...mine
            .filter(
              (terminal) =>
                !previous.some((tab) => tab.kind === 'shell' && tab.terminalId === terminal.terminalId),
            )
            .map((terminal): DockTab => ({
              kind: 'shell',
              key: `shell:${terminal.terminalId}`,
              number: ++shellNumber.current,
              terminalId: terminal.terminalId,
              reattached: true,
            })),
        ]);
      },
      () => undefined,
    );
  }, [open, sessionId]);

  const openRun = useCallback(
    (toolCallId: string) => {
      addRun(toolCallId, true);
      setOpen(true);
    },
    [addRun],
  );

  const openShell = useCallback(() => {
    const number = ++shellNumber.current;
    const key = `shell-new:${number}`;
    setTabs((previous) => [...previous, { kind: 'shell', key, number }]);
    setActive(key);
    setOpen(true);
  }, []);

  const closeTab = useCallback(
    (key: string) => {
      const index = tabs.findIndex((tab) => tab.key === key);
      const next = tabs.filter((tab) => tab.key !== key);
      setTabs(next);
      if (active === key) setActive(next[Math.max(0, index - 1)]?.key);
    },
    [tabs, active],
  );

  const setShellTerminal = useCallback((key: string, terminalId: string | undefined) => {
    setTabs((previous) =>
      previous.map((tab): DockTab => {
        if (tab.key !== key || tab.kind !== 'shell') return tab;
        const base = { kind: 'shell' as const, key: tab.key, number: tab.number };
        return terminalId === undefined ? base : { ...base, terminalId };
      }),
    );
  }, []);

  const activeTab = tabs.find((tab) => tab.key === active) ?? tabs.at(-1);
  const showingId = open && activeTab?.kind === 'run' ? activeTab.toolCallId : undefined;
  const link = useMemo<TerminalLink>(
    () => ({ openRun, showing: new Set(showingId ? [showingId] : []) }),
    [openRun, showingId],
  );

  const activeKey = activeTab?.key;
  // One object per change of the dock itself, so the (memoized) dock skips the session view's other renders.
  return useMemo(
    () => ({
      open,
      tabs,
      active: activeKey,
      router,
      setOpen,
      setActive,
      closeTab,
      openShell,
      setShellTerminal,
      link,
    }),
    [open, tabs, activeKey, router, closeTab, openShell, setShellTerminal, link],
  );
}
