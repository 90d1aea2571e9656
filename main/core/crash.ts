/** The named points where `KEEL_CRASH_AT` makes the process kill itself, for crash-resume tests. */
export const CRASH_POINTS = [
  'after_stream_before_append',
  'after_tool_started',
  'after_tool_executed_before_result',
  'after_approval_before_execute',
  'during_append',
  // A revert of a turn's changes dies at each of its steps (main/core/history/revert.ts, apply.ts): after the
  // user's snapshot, after its journal, after its first file, after every file, after its events.
  'revert_after_snapshot',
  'revert_after_journal',
  'during_revert',
  'revert_after_files',
  'revert_after_events',
  // A Persistent Dir commit dies after its files reached the folder, before its events are appended
  // (main/core/persistent/turnCheckouts.ts: the commit intent holds them).
  'after_commit_before_event',
  // The projection snapshot dies half written, before its rename (main/core/log/projectionSnapshot.ts).
  'during_snapshot_write',
  // A commit dies after its first file reached the folder, the others not yet (a checkout's commit, a direct
  // session's granted files): the commit intent's plan lets the next open finish it.
  'during_commit_files',
  // A capped request dies after its cap check, before it is sent (#31): resume checks again from the log.
  'after_budget_check',
  // Issue #30: a call's PreToolUse hooks ran and their events are in the log, the call not yet started: resume
  // reads their decision back and never runs them again.
  'after_hook_decision',
  // Issue #30: a Stop hook's block is in the log, the model not sent back yet: resume sends it back with the
  // hook's reason, never running that hook again.
  'after_stop_hook_decision',
  // Issue 35: an imported log is written whole under another name, not renamed yet (store/freshDatabase.ts):
  // no session is left, and the next import makes it again.
  'before_import_seal',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/**
 * Fault injection: when `KEEL_CRASH_AT` names this point, the process dies here with SIGKILL, as a power cut
 * or an OOM kill would end it (no exit handlers, no flush). A no-op otherwise.
 */
export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv = process.env): void {
  if (env['KEEL_CRASH_AT'] === point) process.kill(process.pid, 'SIGKILL');
}

/**
 * The `during_append` point, armed when a log opens: a function that dies inside the append transaction, after
 * the rows are written and before the commit, or undefined when `KEEL_CRASH_AT` does not name it. Read once, not
 * per append: each read of process.env is a call into the runtime, measurable on the durable-append path (#19).
 * `KEEL_CRASH_KIND` narrows it to appends that contain an event of that kind (e.g. tool_result).
 */
export function duringAppendCrash(
  env: NodeJS.ProcessEnv = process.env,
): ((events: readonly { kind: string }[]) => void) | undefined {
  if (env['KEEL_CRASH_AT'] !== 'during_append') return undefined;
  const only = env['KEEL_CRASH_KIND'];
  return (events) => {
    if (only === undefined || events.some((event) => event.kind === only))
      process.kill(process.pid, 'SIGKILL');
  };
}
