/**
 * Exit codes of `keel`, the same for every command (documented in main/cli/README.md). Later commands
 * add their own above 2 (e.g. a turn stopped on a pending approval) and 130 after Ctrl-C.
 */
export const ExitCode = {
  /** The command did what it was asked. */
  ok: 0,
  /** Something failed that the input did not cause: a locked session, a corrupt database, an I/O error. */
  failure: 1,
  /** The input was wrong: a bad flag or argument, an unknown session, a missing or invalid file. */
  usage: 2,
  /** A turn stopped on a pending approval (keel approve / keel deny answer it). */
  awaitingApproval: 3,
  /** The model declined (a refusal) or the provider's content filter stopped the reply. */
  declined: 4,
  /** The reply was cut short: the model's output limit, its context window, or a pause by the provider. */
  cutShort: 5,
  /** A spend cap stopped the turn before a request (#31): `keel budget` raises it, `keel resume` continues. */
  budgetReached: 6,
  /** A turn was stopped with Ctrl-C; the interruption is recorded and `keel resume` continues. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
