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

/** settings.json's notification kinds; all on when the file cannot be read (a broken file is said elsewhere). */
export function readNotificationSettings(home: string): NotificationSettings | undefined {
  try {
    return readSettings(home).notifications;
  } catch {
    return undefined;
  }
}
