import fs from 'node:fs';

/**
 * Connections a long-lived host's writer left open when it closed a session (`SessionLog.open(..., { cache })`),
 * for the next write open of the same file in this process. Opening events.sqlite and index.sqlite for every
 * turn cost ~1 ms (the first read maps the WAL and its shm), and the last connection's close checkpoints the
 * turn's WAL frames into the file with an fsync; a kept connection skips both (the WAL is checkpointed by the
 * autocheckpoint, as for any long-lived writer). The lease is released on close as before: only the
 * connection stays, holding no lock between transactions, so other processes write and read as usual.
 *
 * A kept connection is reused only while its path still names the file it opened (same device and inode): a
 * file deleted, replaced or moved aside (a damaged index.sqlite) is another file, and the kept connection is
 * closed instead. Any write open of the file takes it out (the app's delete opens without a cache: its close
 * then closes the connection for real before the folder goes).
 */
export type FileIdentity = string;

/** Device and inode of a file, or undefined when it is gone. */
export function fileIdentity(file: string): FileIdentity | undefined {
  try {
    const stat = fs.statSync(file);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

type Closable = { close(): void };

function closeQuietly(connection: Closable): void {
  try {
    connection.close();
  } catch {
    // A connection that cannot close cleanly is dropped: its WAL is recovered by the next open.
  }
}

/** Up to `limit` kept connections by key, least recently kept closed first. */
export class KeptConnections<T extends Closable> {
  private readonly entries = new Map<string, { connection: T; file: string; identity: FileIdentity }>();

  constructor(private readonly limit: number) {}

  /** The connection kept under `key`, taken out, if its file is still the one it opened; else none (closed). */
  take(key: string): { connection: T; identity: FileIdentity } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (fileIdentity(entry.file) === entry.identity) return entry;
    closeQuietly(entry.connection);
    return undefined;
  }

  /** Keeps an open connection of `file` (opened when it was `identity`); one already kept under `key` stays. */
  keep(key: string, file: string, identity: FileIdentity, connection: T): void {
    if (this.entries.has(key) || fileIdentity(file) !== identity) {
      closeQuietly(connection);
      return;
    }
    installExitHook();
    this.entries.set(key, { connection, file, identity });
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limit) break;
      this.entries.delete(oldest);
      closeQuietly(entry.connection);
    }
  }

  /** Closes every kept connection (process exit, tests). */
  closeAll(): void {
    for (const entry of this.entries.values()) closeQuietly(entry.connection);
    this.entries.clear();
  }

  /** How many are kept (tests). */
  get size(): number {
    return this.entries.size;
  }
}

const pools: KeptConnections<Closable>[] = [];
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A clean exit closes them (the last close checkpoints); a kill -9 leaves the WAL to the next open.
  process.on('exit', () => closeKeptConnections());
}

/** A pool closed with the others at exit and by `closeKeptConnections`. */
export function keptConnections<T extends Closable>(limit: number): KeptConnections<T> {
  const pool = new KeptConnections<T>(limit);
  pools.push(pool);
  return pool;
}

/** Closes every connection kept in this process. */
export function closeKeptConnections(): void {
  for (const pool of pools) pool.closeAll();
}
