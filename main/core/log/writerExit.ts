/** Logs open for writing in this process, so their leases are released when the process exits. */
const openWriters = new Set<{ close(): void }>();
let exitHookInstalled = false;

/** Registers a log open for writing; the first one installs the exit hook. */
export function trackWriter(log: { close(): void }): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // 'exit' handlers must be synchronous; better-sqlite3 is. A kill -9 skips this: the next
    // writer takes the lease over because the pid is dead.
    process.on('exit', () => {
      for (const writer of [...openWriters]) {
        try {
          writer.close();
        } catch {
          // Exiting anyway; the lease is taken over once this pid is gone.
        }
      }
    });
  }
  openWriters.add(log);
}

/** Forgets a log that was closed. */
export function untrackWriter(log: { close(): void }): void {
  openWriters.delete(log);
}
