import { z } from 'zod';
import { eventBase } from './eventBase.js';

// Issue #32: the event kinds of background commands (run_command with background: true). events.ts imports them
// into SessionEvent. A background command lives only in the Keel process that started it: these events are the
// record of it, so a transcript shows what ran and a resumed session knows it is gone (never re-run).

const { base } = eventBase;

/** A background command's handle, as the model and the user name it (`bg-<call id>`). */
export const BackgroundHandle = z.string().min(1).max(200);

/** A background command started: its handle, the command, the call that started it, its full output's artifact. */
export const BackgroundStarted = z.object({
  ...base,
  kind: z.literal('background_started'),
  handle: BackgroundHandle,
  command: z.string(),
  toolCallId: z.string(),
  /** Where its whole (redacted) output is written, relative to the artifacts folder. */
  artifact: z.string(),
});

/**
 * What the model was shown of a background command's output by one read (command_output, stop_command): which
 * characters (`from`..`to` of its whole output), so a transcript can tell what was read when; the text itself is
 * the call's tool_result.
 */
export const BackgroundOutput = z.object({
  ...base,
  kind: z.literal('background_output'),
  handle: BackgroundHandle,
  toolCallId: z.string(),
  from: z.number().int().nonnegative(),
  to: z.number().int().nonnegative(),
});

/** Why a background command ended. `keel_ended`: the Keel that ran it ended (crash, quit); found on resume. */
export const BackgroundEndReason = z.enum([
  'exited',
  'stopped',
  'timed_out',
  'session_stopped',
  'keel_ended',
]);
export type BackgroundEndReason = z.infer<typeof BackgroundEndReason>;

/**
 * A background command ended (as far as this session knows: recorded when Keel first sees it). With `toolCallId`
 * the model read it in that call's result; without, Keel recorded it outside any call (the session or Keel was
 * stopped, the user stopped it, it ended between turns, it was lost with a crashed Keel) and the projection tells
 * the model in a note where it sits. Older logs recorded a tool's end without `toolCallId`: their reasons
 * `exited` / `stopped` / `timed_out` came only from tools then.
 */
export const BackgroundExited = z.object({
  ...base,
  kind: z.literal('background_exited'),
  handle: BackgroundHandle,
  reason: BackgroundEndReason,
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  /** The call whose result told the model of this end. */
  toolCallId: z.string().optional(),
  /** The command (clipped), for the note that tells the model of an end it did not read. */
  command: z.string().optional(),
  /** Recorded by Keel outside a call (a stop, a turn's start or end, a resume): the model was not told by a result. */
  outsideCall: z.literal(true).optional(),
});

/** What the session's log says of one background command (a lost handle's answer, the terminal dock's list). */
export interface BackgroundRecord {
  handle: string;
  command: string;
  /** Its end as recorded; absent while the log knows of none. */
  end?: { reason: BackgroundEndReason; exitCode?: number | null; signal?: string | null };
}

/** One line saying how a background command ended, for people and the model. Pure. */
export function describeBackgroundEnd(end: NonNullable<BackgroundRecord['end']>): string {
  switch (end.reason) {
    case 'keel_ended':
      return 'it ended with the Keel that ran it (Keel quit or crashed)';
    case 'session_stopped':
      return 'it was killed when the session was stopped';
    case 'stopped':
      return 'it was stopped';
    case 'timed_out':
      return 'it was killed at its time limit';
    case 'exited':
      return end.signal ? `it ended by ${end.signal}` : `it exited with code ${end.exitCode ?? 'unknown'}`;
  }
}

/** A background event as a tool hands it to the turn, before the log stamps it (seq, at). */
export type BackgroundFact =
  | Omit<z.infer<typeof BackgroundStarted>, 'seq' | 'at'>
  | Omit<z.infer<typeof BackgroundOutput>, 'seq' | 'at'>
  | Omit<z.infer<typeof BackgroundExited>, 'seq' | 'at'>;
