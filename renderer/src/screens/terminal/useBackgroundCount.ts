import { useEffect, useMemo, useState } from 'react';
import type { SessionEvent } from '../../api/types.js';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';

/** How often the running count is re-read while the dock is closed and a command may still run. */
const POLL_MS = 2000;

/**
 * The handles the log says were started and not (yet) recorded as ended, sorted and joined: what may run. Pure.
 * A command that ends on its own between turns is recorded later; background.list says so meanwhile.
 */
export function unendedBackground(events: readonly SessionEvent[]): string {
  const handles = new Set<string>();
  for (const event of events) {
    if (event.kind === 'background_started') handles.add(event.handle);
    else if (event.kind === 'background_exited') handles.delete(event.handle);
  }
  return [...handles].sort().join('\n');
}

/**
 * Issue #32: how many of the session's background commands run now, for the Terminal toggle while the dock is
 * closed (the dock lists them itself when open). Asked of main (background.list) only while the log knows of a
 * command not recorded as ended, every 2 s until none runs; 0 otherwise.
 */
export function useBackgroundCount(
  sessionId: string,
  events: readonly SessionEvent[],
  dockOpen: boolean,
): number {
  const unended = useMemo(() => unendedBackground(events), [events]);
  const [count, setCount] = useState(0);
  useEffect(() => {
    if (unended === '') {
      setCount(0);
      return;
    }
    if (dockOpen) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      let running = 1;
      try {
        const listed = await call(keel().background.list({ sessionId }));
        running = listed.commands.filter((command) => command.state === 'running').length;
        if (live) setCount(running);
      } catch {
        // Asked again at the next tick: a dropped connection is said by the page's banner.
      }
      // None runs: nothing to watch until the log records another start.
      if (live && running > 0) timer = setTimeout(() => void load(), POLL_MS);
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [sessionId, unended, dockOpen]);
  return count;
}
