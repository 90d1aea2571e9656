import { pageOwners, readWalDelta } from '../../main/store/walAccounting.js';
import type { WalCursor } from '../../main/store/walAccounting.js';
import { readWrittenBytes } from './harness.js';

/**
 * Where the bytes of Keel's calls go, measured, not modelled. Around each call: the bytes handed to write
 * syscalls (Linux /proc/self/io `wchar` delta) and the frames that call appended to each database's WAL
 * (frame headers read from the -wal file: page number, salts). A frame costs page size + 24 bytes and is
 * put under the b-tree that owns its page (SQLite's dbstat, read at the end). What a call wrote beyond its
 * WAL frames is its checkpoint's copy-back into the main file when that call's commit pushed the WAL to
 * the autocheckpoint size, else "other" (WAL headers are counted with the frames).
 */

/** dbstat's page types, as the breakdown names them (leaf pages go by the b-tree's name alone). */
const PAGE_TYPE: Record<string, string> = { overflow: ' (overflow pages)', internal: ' (interior pages)' };

type MeteredFile = {
  label: string;
  db: string;
  /** The file's wal_autocheckpoint: a commit that leaves this many frames checkpoints. */
  autocheckpoint: number;
  cursor: WalCursor | undefined;
  /** Frames per page number, counted while the meter counts. */
  frames: Map<number, number>;
  pageSize: number;
  headerBytes: number;
  copyBack: number;
  /** Pages in the WAL's current generation: what its next checkpoint copies back. */
  generation: Set<number>;
};

/** One row of the breakdown: bytes per counted step. */
export type BreakdownRow = { part: string; bytes: number };

export class WriteMeter {
  private readonly files: MeteredFile[];
  private counting = false;
  private other = 0;
  private total = 0;
  private steps = 0;

  constructor(files: readonly { label: string; db: string; autocheckpoint: number }[]) {
    this.files = files.map((f) => ({
      ...f,
      cursor: undefined,
      frames: new Map(),
      pageSize: 0,
      headerBytes: 0,
      copyBack: 0,
      generation: new Set<number>(),
    }));
    for (const file of this.files) file.cursor = readWalDelta(`${file.db}-wal`, undefined).cursor;
  }

  /** Counts from now on (the measured window), one step at a time. */
  count(on: boolean): void {
    this.counting = on;
  }

  /** A counted step ended. */
  step(): void {
    if (this.counting) this.steps += 1;
  }

  /**
   * Runs one Keel call and accounts for what it wrote; returns its wchar delta (null without /proc). With
   * `closing`, the call checkpoints every file: what it wrote beyond WAL frames is split between the files
   * by the pages each WAL generation held.
   */
  measure(call: () => void, options: { closing?: boolean } = {}): number | null {
    const before = readWrittenBytes();
    call();
    const after = readWrittenBytes();
    const written = before === null || after === null ? null : after - before;
    let framed = 0;
    let checkpointed: MeteredFile | undefined;
    // Before the deltas: a close deletes the WAL, which reads as a restart.
    const held = this.files.map((f) => f.generation.size * f.pageSize);
    for (const file of this.files) {
      const delta = readWalDelta(`${file.db}-wal`, file.cursor);
      file.cursor = delta.cursor;
      if (delta.restarted) file.generation.clear();
      for (const page of delta.pages) file.generation.add(page);
      if (delta.cursor.pageSize > 0) file.pageSize = delta.cursor.pageSize;
      framed += delta.bytes;
      if (delta.pages.length > 0 && delta.cursor.frames >= file.autocheckpoint) checkpointed = file;
      if (!this.counting) continue;
      file.headerBytes += delta.bytes - delta.pages.length * (file.pageSize + 24);
      for (const page of delta.pages) file.frames.set(page, (file.frames.get(page) ?? 0) + 1);
    }
    if (this.counting && written !== null) {
      this.total += written;
      const rest = written - framed;
      if (options.closing) {
        const all = held.reduce((a, b) => a + b, 0);
        this.files.forEach((f, i) => (f.copyBack += all === 0 ? 0 : (rest * (held[i] ?? 0)) / all));
      } else if (checkpointed) checkpointed.copyBack += rest;
      else this.other += rest;
    }
    return written;
  }

  /** Bytes per counted step by part (call before the databases close: it reads their page owners). */
  breakdown(): { total: number; rows: BreakdownRow[] } {
    const per = (bytes: number) => Math.round(bytes / Math.max(1, this.steps));
    const rows: BreakdownRow[] = [];
    for (const file of this.files) {
      const owners = pageOwners(file.db);
      const byOwner = new Map<string, number>();
      for (const [page, frames] of file.frames) {
        const owner = owners.get(page);
        // Page 1 holds the file header (the page count): every commit that grows the file rewrites it.
        const name =
          page === 1
            ? 'page 1 (file header, rewritten when the file grows)'
            : owner
              ? `${owner.name}${PAGE_TYPE[owner.type] ?? ''}`
              : 'freed page';
        byOwner.set(name, (byOwner.get(name) ?? 0) + frames * (file.pageSize + 24));
      }
      const sorted = [...byOwner].sort((a, b) => b[1] - a[1]);
      for (const [name, bytes] of sorted)
        rows.push({ part: `${file.label} WAL frames: ${name}`, bytes: per(bytes) });
      if (file.headerBytes > 0)
        rows.push({ part: `${file.label} WAL headers`, bytes: per(file.headerBytes) });
      rows.push({ part: `${file.label} checkpoint copy-back`, bytes: per(file.copyBack) });
    }
    rows.push({ part: 'other writes (neither WAL frames nor a checkpoint)', bytes: per(this.other) });
    return { total: per(this.total), rows };
  }
}
