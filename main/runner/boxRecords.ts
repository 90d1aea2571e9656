import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { findMarkedProcesses, isAlive, killRunTree } from './processTree.js';

/*
 * A record of each box while it runs (`<dir>/<runId>.json`, dir = the session's `boxes/`), so that a later
 * Keel can end a box an earlier one left behind before it decides what happened to the command (resume asks
 * "outcome unknown" only once nothing of the first run can still land an effect). The lifeline chain
 * (./lifeline.ts) makes a surviving box unexpected; this is the check that does not rely on it.
 */

const BoxRecord = z.object({
  runId: z.string().regex(/^[0-9a-f-]{36}$/),
  /** The pty child: the launcher, then bwrap (it execs in place); null in the record written before the spawn. */
  pid: z.number().int().positive().nullable(),
  /** Its start time in clock ticks since boot (/proc/PID/stat field 22), so a reused PID is never signalled. */
  startTicks: z.string().regex(/^\d+$/).nullable(),
  /** The run's cgroup folders, when it had some: whatever is still in them belongs to the run. */
  cgroups: z.array(z.string()),
});
type BoxRecord = z.infer<typeof BoxRecord>;

/** Start time of `pid` in clock ticks since boot, or null (gone, or not Linux). */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Writes the record of a box about to start (`pid: null`) or just started (temp file + rename: a crash leaves
 * the whole record or none).
 */
export function recordBox(
  dir: string,
  box: { runId: string; pid: number | null; cgroupProcsFiles: string[] },
): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const record: BoxRecord = {
    runId: box.runId,
    pid: box.pid,
    startTicks: box.pid === null ? null : processStartTicks(box.pid),
    cgroups: box.cgroupProcsFiles.map((file) => path.dirname(file)),
  };
  const file = path.join(dir, `${box.runId}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Removes the record once the box and everything it started are gone. */
export function forgetBox(dir: string, runId: string): void {
  rmSync(path.join(dir, `${runId}.json`), { force: true });
}

/**
 * Ends every box recorded in `dir` that is still alive (its root if the PID still names the same process,
 * every process carrying its run marker, whatever is left in its cgroups), waits until none is left, and
 * removes the records; first clears the temp folders of dead Keels (`sweepDeadScratch`). Returns how many boxes
 * still had living processes. Never throws for a damaged record:
 * it is removed (a box written by this code always has a whole one).
 */
export async function endLeftoverBoxes(dir: string): Promise<number> {
  await sweepDeadScratch();
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return 0;
  }
  let ended = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    let record: BoxRecord | null = null;
    try {
      const parsed = BoxRecord.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success) record = parsed.data;
    } catch {
      record = null;
    }
    if (record !== null && (await endBox(record))) ended += 1;
    rmSync(file, { force: true });
  }
  return ended;
}

async function endBox(record: BoxRecord): Promise<boolean> {
  const pid = record.pid ?? -1;
  const sameRoot =
    record.startTicks !== null && pid > 0 && isAlive(pid) && processStartTicks(pid) === record.startTicks;
  const inCgroups = (): number[] => record.cgroups.flatMap(cgroupMembers);
  // A root that is gone or whose PID now names another process is never signalled, nor its group: the
  // marker and the cgroups still find every member of the run.
  const signalled = await killRunTree(sameRoot ? pid : -1, record.runId, {
    rootExited: !sameRoot,
    extraPids: inCgroups,
  });
  for (let wait = 0; wait < 200 && sameRoot && isAlive(pid); wait += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const dir of record.cgroups) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty yet, or already gone.
    }
  }
  return sameRoot || signalled > 0;
}

function cgroupMembers(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number);
  } catch {
    return [];
  }
}

const SCRATCH = /^keel-(?:run|terminal)-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;
/** A scratch folder named the old way (no owner): no run lasts this long (the longest timeout is 30 minutes). */
const LEGACY_SCRATCH = /^keel-(?:run|terminal)-[A-Za-z0-9]{6}$/;
const LEGACY_AGE_MS = 24 * 3600_000;
/** The file in a scratch folder naming its run (the run marker's value), written before anything of it starts. */
const RUN_ID_FILE = 'run-id';
const RUN_ID = /^[0-9a-f-]{36}$/;

/**
 * `<tmp>/keel-<kind>-<this pid>-<its start time>-XXXXXX`, holding `run-id` (`runId`): the owner is in the name
 * and the run in the folder, for sweepDeadScratch.
 */
export function makeRunScratch(kind: 'run' | 'terminal', runId: string): string {
  const ticks = processStartTicks(process.pid) ?? '0';
  const scratch = mkdtempSync(path.join(os.tmpdir(), `keel-${kind}-${process.pid}-${ticks}-`));
  writeFileSync(path.join(scratch, RUN_ID_FILE), runId, { mode: 0o400 });
  return scratch;
}

/**
 * Ends what runs of Keels that are gone (killed: their `finally` never ran) left in `tmp`, then removes their
 * scratch folders: those whose owner pid is dead or now names another process (another start time). What is
 * ended is every process carrying the run marker named in the folder's `run-id` and started after its owner
 * (a bwrap child the owner's death caught in bwrap's setup is never armed and waits there forever, however
 * long its session is never resumed); a marked process older than the owner is not provably of its run and
 * is left alone. A folder whose processes could not all be ended is kept for the next sweep. A folder of a
 * live Keel is never touched; one named the old way (no owner) only when untouched for a day. Hosts call it
 * when they start (`keel`, the app, keel serve), and so do the first boxed run of a process and every resume.
 * Returns how many folders were removed; never throws.
 */
export async function sweepDeadScratch(tmp = os.tmpdir()): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const owned = SCRATCH.exec(name);
    let dead = false;
    if (owned !== null) {
      const pid = Number(owned[1]);
      const ticks = owned[2] as string;
      // Start time '0': the owner could not read its own (not Linux): the pid alone decides.
      dead = !isAlive(pid) || (ticks !== '0' && processStartTicks(pid) !== ticks);
      if (dead && !(await endDeadRun(path.join(tmp, name), ticks))) continue;
    } else if (LEGACY_SCRATCH.test(name)) {
      try {
        dead = Date.now() - statSync(path.join(tmp, name)).mtimeMs > LEGACY_AGE_MS;
      } catch {
        dead = false;
      }
    }
    if (!dead) continue;
    try {
      rmSync(path.join(tmp, name), { recursive: true, force: true });
      removed += 1;
    } catch {
      // Not ours to remove (another user's), or gone meanwhile.
    }
  }
  return removed;
}

/**
 * Ends the processes of the dead owner's run that `scratch` names (see sweepDeadScratch), as resume ends a
 * recorded box whose root is gone: by the run marker, with their descendants, never this process or its
 * ancestors. Returns false when some are still alive afterwards.
 */
async function endDeadRun(scratch: string, ownerTicks: string): Promise<boolean> {
  let runId: string;
  try {
    runId = readFileSync(path.join(scratch, RUN_ID_FILE), 'utf8');
  } catch {
    return true; // written by an older Keel, or before the file: nothing names the run
  }
  if (!RUN_ID.test(runId)) return true;
  const marked = findMarkedProcesses(runId);
  if (marked.length === 0) return true;
  // The owner's start time is in the folder's name: a process of its run cannot have started before it.
  const owner = Number(ownerTicks);
  const older = marked.some((pid) => Number(processStartTicks(pid) ?? Number.MAX_SAFE_INTEGER) < owner);
  if (ownerTicks === '0' || older) return true;
  await killRunTree(-1, runId, { rootExited: true });
  return findMarkedProcesses(runId).length === 0;
}
