/*
 * Issue #32: how a host ends every background command when its process is about to end, without loading the
 * runner (the CLI calls it after every command; most never started one). ./background.ts registers itself on
 * its first start.
 */

let endAll: (() => Promise<unknown>) | null = null;

/** Called by ./background.ts: how to stop every background command of this process. */
export function registerBackgroundEnd(end: () => Promise<unknown>): void {
  endAll = end;
}

/**
 * Stops every background command this process started and waits for their trees to end. A process that ends
 * (`keel run` after its turn) must call it: a running command's pty would keep it alive until its timeout.
 */
export async function stopBackgroundCommands(): Promise<void> {
  await endAll?.();
}
