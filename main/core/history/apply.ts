// Writing a planned revert so that a crash never leaves it half done: every byte it will write is kept
// first, a journal names each write, and an unfinished journal is completed before anything else runs.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FileMode, Sha256, type NewEvent } from '../../common/events.js';
import type { CrashPoint } from '../crash.js';
import { keepBytes, readFileState, readKept } from '../persistent/kept.js';
import { removeConfined, writeStreamConfined } from '../persistent/streamWrite.js';
import { ConfinedFileError, PathEscapeError, writeSymlinkConfined } from '../../sandbox/paths.js';
import type { RevertWrite } from './plan.js';
import { historyDir } from '../paths.js';

const JournalSide = z.object({ mode: FileMode, sha256: Sha256 }).nullable();

/** The journal of a revert being written: `<dataDir>/history/revert-pending.json`. */
const Journal = z.object({
  /** The log's last seq when it was planned: its events were appended when the log has one after this. */
  expectedLastSeq: z.number().int().nonnegative(),
  dirs: z.array(
    z.object({
      root: z.string(),
      writes: z.array(z.object({ path: z.string(), from: JournalSide, to: JournalSide })),
    }),
  ),
  events: z.array(z.unknown()),
});
type Journal = z.infer<typeof Journal>;

/** Where the journal of a session's unfinished revert lives. */
export function journalPath(dataDir: string): string {
  return path.join(historyDir(dataDir), 'revert-pending.json');
}

/** One folder's planned writes. */
export type DirWrites = { root: string; writes: readonly RevertWrite[] };

/**
 * Writes a planned revert: the bytes of both sides of every write are kept (the user's current ones are what
 * reverting the revert restores), then the journal, then the files, then `events` through `append`, then the
 * journal goes. `crash` is called at each step (fault injection for the crash tests: core/crash.ts).
 */
export async function writeRevert(
  dataDir: string,
  store: string,
  dirs: readonly DirWrites[],
  events: readonly NewEvent[],
  log: { lastSeq(): number; append: (events: readonly NewEvent[]) => void },
  crash: (point: CrashPoint) => void = () => undefined,
): Promise<void> {
  const side = (s: RevertWrite['from']) =>
    s === null ? null : { mode: s.mode, sha256: keepBytes(store, s.bytes, { durable: true }) };
  const journal: Journal = {
    expectedLastSeq: log.lastSeq(),
    dirs: dirs.map((dir) => ({
      root: dir.root,
      writes: dir.writes.map((w) => ({ path: w.path, from: side(w.from), to: side(w.to) })),
    })),
    events: [...events],
  };
  const file = journalPath(dataDir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(journal));
  const fd = fs.openSync(temp, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temp, file);
  crash('revert_after_journal');
  await finishJournal(journal, store, log, crash);
  crash('revert_after_events');
  fs.rmSync(file, { force: true });
}

/**
 * Completes a revert a crash interrupted (a no-op without a journal): each write not yet made is made (a file
 * changed again meanwhile, matching neither side, is left as it is and dropped from the event), the events
 * are appended unless they already were. Returns true when there was one.
 */
export async function finishPendingRevert(
  dataDir: string,
  store: string,
  log: { lastSeq(): number; append: (events: readonly NewEvent[]) => void },
): Promise<boolean> {
  const file = journalPath(dataDir);
  if (!fs.existsSync(file)) return false;
  let journal: Journal;
  try {
    journal = Journal.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    // A journal that cannot be read was never finished being written: no file had been touched yet.
    fs.rmSync(file, { force: true });
    return false;
  }
  await finishJournal(journal, store, log);
  fs.rmSync(file, { force: true });
  return true;
}

async function finishJournal(
  journal: Journal,
  store: string,
  log: { lastSeq(): number; append: (events: readonly NewEvent[]) => void },
  crash: (point: CrashPoint) => void = () => undefined,
): Promise<void> {
  const skipped = new Set<string>();
  let written = 0;
  for (const dir of journal.dirs) {
    for (const write of dir.writes) {
      const now = readFileState(path.join(dir.root, write.path));
      // A file is compared by its bytes and its mode (a revert may change the mode alone).
      const nowSide =
        now === undefined ? 'none' : now === 'too-large' ? 'too-large' : `${now.mode}:${now.sha256}`;
      const sideKey = (side: z.infer<typeof JournalSide>) =>
        side === null ? 'none' : `${side.mode}:${side.sha256}`;
      if (nowSide === sideKey(write.to)) continue;
      if (nowSide !== sideKey(write.from)) {
        skipped.add(`${dir.root}\0${write.path}`);
        continue;
      }
      try {
        await writeSide(
          dir.root,
          write.path,
          write.to,
          now !== undefined && now !== 'too-large' && now.mode === '120000',
          store,
        );
      } catch (error) {
        // The path leads out of its folder now (a link made since it was planned): it is left as it is and
        // dropped from the event, as a file changed meanwhile is. Thrown on, the journal would stay and
        // every later revert, restore and turn of the session would fail on it.
        if (!(error instanceof ConfinedFileError) && !(error instanceof PathEscapeError)) throw error;
        skipped.add(`${dir.root}\0${write.path}`);
        continue;
      }
      if (++written === 1) crash('during_revert');
    }
  }
  crash('revert_after_files');
  if (log.lastSeq() > journal.expectedLastSeq) return;
  const events = journal.events as NewEvent[];
  log.append(
    skipped.size === 0
      ? events
      : events.map((event, index) => {
          if (event.kind !== 'changes_reverted') return event;
          const root = journal.dirs[index]?.root ?? '';
          return { ...event, files: event.files.filter((f) => !skipped.has(`${root}\0${f.path}`)) };
        }),
  );
}

async function writeSide(
  root: string,
  rel: string,
  to: z.infer<typeof JournalSide>,
  isLinkNow: boolean,
  store: string,
): Promise<void> {
  if (to === null) {
    removeConfined(root, rel);
    return;
  }
  const bytes = readKept(store, to.sha256);
  if (bytes === undefined)
    throw new Error(`the history store lost the bytes of ${rel}; nothing more was written`);
  // A link at the name is replaced, never written through.
  if (isLinkNow || to.mode === '120000') removeConfined(root, rel);
  if (to.mode === '120000') {
    writeSymlinkConfined(root, rel, bytes.toString('utf8'), { argName: 'path', allowProtected: true });
    return;
  }
  await writeStreamConfined(root, rel, bytes, { mode: to.mode === '100755' ? 0o755 : 0o644 });
}
