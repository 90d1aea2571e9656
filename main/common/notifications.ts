import { z } from 'zod';
import type { TurnOutcome } from './harnessViews.js';

/*
 * Issue #32: when the app tells a person that a turn needs them. Pure: the renderer decides with it on each
 * `session.status` push (a turn ended), and settings.json keeps which kinds are on.
 */

/** Which turn endings notify while the window is not focused (settings.json `notifications`). */
export const NotificationSettings = z
  .object({
    /** The turn stopped on an approval request. */
    approval: z.boolean(),
    /** The turn completed. */
    finished: z.boolean(),
    /** The turn failed (the provider, the budget, an error). */
    failed: z.boolean(),
  })
  .strict();
export type NotificationSettings = z.infer<typeof NotificationSettings>;

export type NotificationKind = keyof NotificationSettings;

/** The kind of notification a turn's outcome calls for, or undefined (a stop the person made). */
export function notificationKindOf(outcome: TurnOutcome): NotificationKind | undefined {
  switch (outcome.status) {
    case 'awaiting_approval':
      return 'approval';
    case 'completed':
      return 'finished';
    case 'failed':
    case 'budget_exhausted':
      return 'failed';
    default:
      return undefined; // interrupted: the person stopped it, they know
  }
}

/**
 * The notification for a turn that ended, or undefined when none is due: the window has focus (the person
 * is looking), the kind is switched off, or the outcome is a stop. `title` names the session.
 */
export function turnNotification(
  outcome: TurnOutcome,
  options: { title: string; focused: boolean; settings: NotificationSettings | undefined },
): { kind: NotificationKind; title: string; body: string } | undefined {
  const kind = notificationKindOf(outcome);
  if (kind === undefined || options.focused) return undefined;
  if (options.settings && !options.settings[kind]) return undefined;
  const body =
    kind === 'approval'
      ? 'Waiting for your approval'
      : kind === 'finished'
        ? 'The turn finished'
        : outcome.status === 'failed'
          ? `The turn failed: ${outcome.error.slice(0, 160)}`
          : 'The turn stopped: its step budget is spent';
  return { kind, title: options.title, body };
}
