import { useEffect, useRef, useState } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';

/**
 * For a subagent session (`parentId` set): true while its parent's turn runs in this process, the only time
 * the child's commands stream here and Kill reaches them (main runs the child inside that turn). Follows the
 * parent's session.status pushes; calls `onAnswered` when the parent records this child's answer (the child's
 * own turn is over then). Always false for a top-level session.
 */
export function useParentTurn(
  sessionId: string,
  parentId: string | undefined,
  onAnswered: () => void,
): boolean {
  const [running, setRunning] = useState(false);
  // A push is newer than the read it may race with.
  const pushed = useRef(false);

  useEffect(() => {
    setRunning(false);
    pushed.current = false;
    if (parentId === undefined) return;
    let cancelled = false;
    void call(keel().sessions.open({ sessionId: parentId })).then(
      (opened) => {
        if (!cancelled && !pushed.current) setRunning(opened.running);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [parentId]);

  useSubscription('session.status', (payload) => {
    if (parentId === undefined || payload.sessionId !== parentId) return;
    pushed.current = true;
    setRunning(payload.running);
  });

  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (parentId === undefined || id !== parentId) return;
    if (event.kind === 'subagent_result' && event.childId === sessionId) onAnswered();
  });

  return running;
}
