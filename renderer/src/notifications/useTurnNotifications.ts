import { useRef } from 'react';
import { turnNotification, type NotificationSettings } from '../../../main/ipc/contract.js';
import { call } from '../api/call.js';
import { keel } from '../api/keel.js';
import { useSubscription } from '../api/useSubscription.js';

/*
 * Issue #32: the OS notification when a turn stops on an approval, finishes or fails while this window is
 * not focused (the Notification API: Electron shows it as the OS's own, a browser on `keel serve` as its
 * own). Clicking it brings the window forward on that session. Which kinds notify is settings.json's
 * `notifications`; the decision is `turnNotification` (common/notifications.ts).
 */

/** Notifications of turn endings, for the whole app (mount once). */
export function useTurnNotifications(
  settings: NotificationSettings | undefined,
  openSession: (sessionId: string) => void,
): void {
  // Permission is asked once, on the first notification due (Electron grants it to the app's own page).
  const asked = useRef(false);
  useSubscription('session.status', (payload) => {
    if (payload.outcome === undefined || typeof Notification === 'undefined') return;
    const due = turnNotification(payload.outcome, { title: 'Keel', focused: document.hasFocus(), settings });
    if (due === undefined) return;
    void (async () => {
      if (Notification.permission === 'default' && !asked.current) {
        asked.current = true;
        await Notification.requestPermission();
      }
      if (Notification.permission !== 'granted') return;
      const title = await sessionTitle(payload.sessionId);
      const notification = new Notification(`${title}: ${due.body}`, {
        body: due.kind === 'approval' ? 'Open the session to decide.' : 'Open the session to see it.',
        // One per session at a time: a newer ending replaces the older one.
        tag: `keel-${payload.sessionId}`,
      });
      notification.onclick = () => {
        window.focus();
        openSession(payload.sessionId);
        notification.close();
      };
    })();
  });
}

async function sessionTitle(sessionId: string): Promise<string> {
  try {
    const opened = await call(keel().sessions.open({ sessionId }));
    return opened.session.title ?? 'Keel session';
  } catch {
    return 'Keel session';
  }
}
