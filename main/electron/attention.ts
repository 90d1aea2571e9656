import type { Push } from '../ipc/hub.js';
import { turnNotification, type NotificationSettings } from '../ipc/contract.js';
import { readSettings } from '../core/harness/index.js';

/*
 * Issue #32: the window's attention request when a turn ends in a way that calls for the person (an approval,
 * the end, a failure) while the window is not focused: the taskbar entry flashes (Windows, Linux) or the dock
 * icon bounces (macOS) until the window is focused. The OS notification itself comes from the renderer's
 * Notification API (renderer/src/notifications), which security.ts lets through for this one permission.
 */

/** The part of a BrowserWindow and of `app.dock` this uses (so it is tested without Electron). */
export type AttentionWindow = { isFocused(): boolean; flashFrame(flag: boolean): void };
export type Dock = { bounce(type: 'informational' | 'critical'): number } | undefined;

/** Asks for attention for `push` when it is a turn ending due per `settings`; returns whether it did. */
export function requestAttention(
  push: Push,
  window: AttentionWindow | undefined,
  dock: Dock,
  settings: NotificationSettings | undefined,
): boolean {
  if (push.topic !== 'session.status' || push.payload.outcome === undefined || window === undefined)
    return false;
  const due = turnNotification(push.payload.outcome, {
    title: 'Keel',
    focused: window.isFocused(),
    settings,
  });
  if (due === undefined) return false;
  window.flashFrame(true);
  dock?.bounce(due.kind === 'approval' ? 'critical' : 'informational');
  return true;
}

/** The part of Electron's `app` the badge uses. */
export type BadgeApp = { setBadgeCount(count: number): boolean };

/**
 * The sessions waiting for an approval after `push`: a session.status saying awaiting_approval adds its
 * session, any other status of it removes it; other pushes change nothing. Pure.
 */
export function waitingAfter(waiting: ReadonlySet<string>, push: Push): ReadonlySet<string> {
  if (push.topic !== 'session.status') return waiting;
  const { sessionId, status } = push.payload;
  if ((status === 'awaiting_approval') === waiting.has(sessionId)) return waiting;
  const next = new Set(waiting);
  if (status === 'awaiting_approval') next.add(sessionId);
  else next.delete(sessionId);
  return next;
}

/**
 * The app's badge (the dock on macOS, the launcher on Linux desktops that show one): the number of sessions
 * this app saw stop on an approval and not move since, the count the window title shows too
 * (PendingApprovalsBadge). Returns the push listener; the badge is set only when the count changes.
 */
export function createApprovalBadge(app: BadgeApp): (push: Push) => void {
  let waiting: ReadonlySet<string> = new Set();
  return (push) => {
    const next = waitingAfter(waiting, push);
    if (next === waiting) return;
    waiting = next;
    app.setBadgeCount(waiting.size);
  };
}

/** settings.json's notification kinds; all on when the file cannot be read (a broken file is said elsewhere). */
export function readNotificationSettings(home: string): NotificationSettings | undefined {
  try {
    return readSettings(home).notifications;
  } catch {
    return undefined;
  }
}
