/*
 * Issue #32: how a host ends every background command when its process is about to end, without loading the
 * runner (the CLI calls it after every command; most never started one). ./background.ts registers itself on
 * its first start; a harness registers how it records the ends in its sessions' logs.
 */

let endAll: (() => Promise<unknown>) | null = null;
/** By Keel home: records the ends a stop left unrecorded (core/harness/backgroundLog.ts). */
const recorders = new Map<string, () => Promise<void>>();

/** Called by ./background.ts: how to stop every background command of this process. */
export function registerBackgroundEnd(end: () => Promise<unknown>): void {
  endAll = end;
}

/** Called by a harness: how to record, in its home's session logs, the ends of the commands a stop killed. */
export function registerBackgroundRecorder(home: string, record: () => Promise<void>): void {
  recorders.set(home, record);
}

/**
 * Stops every background command this process started, waits for their trees to end, and records each end in
 * its session's log (`keel_ended`: the process that ran them ends). A process that ends (`keel run` after its
 * turn) must call it: a running command's pty would keep it alive until its timeout.
 */
export async function stopBackgroundCommands(): Promise<void> {
  if (endAll === null) return;
  await endAll();
  for (const record of recorders.values()) await record().catch(() => undefined);
}
