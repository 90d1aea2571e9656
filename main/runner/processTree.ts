import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that marks every process of one run, so escapees that re-parent are still found. */
export const RUN_MARKER_VARIABLE = 'KEEL_RUN_ID';

/** One row of the process table. */
export interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** A zombie is already dead (only its parent's wait is missing): nothing to kill. */
  zombie: boolean;
}

/** Reads the process table: /proc on Linux, `ps` elsewhere. Processes that vanish while reading are skipped. */
export function listProcesses(): ProcessRow[] {
  if (process.platform !== 'linux') return listWithPs();
  const rows: ProcessRow[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may itself contain spaces or parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        sid: Number(fields[3]),
        zombie: fields[0] === 'Z',
      });
    } catch {
      // Exited between readdir and read.
    }
  }
  return rows;
}

/** PIDs whose environment carries `KEEL_RUN_ID=<runId>` (Linux only; other platforms return none). */
export function findMarkedProcesses(runId: string): number[] {
  if (process.platform !== 'linux') return [];
  const needle = Buffer.from(`\0${RUN_MARKER_VARIABLE}=${runId}\0`);
  const first = Buffer.from(`${RUN_MARKER_VARIABLE}=${runId}\0`);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle) || environ.subarray(0, first.length).equals(first))
        found.push(Number(entry));
    } catch {
      // Exited, or not ours to read.
    }
  }
  return found;
}

/**
 * Every process belonging to the run rooted at `rootPid`: its descendants, its process group and
 * session, and anything carrying the run's marker (a double-forked `setsid` escapee re-parented to init),
 * plus their descendants. Never includes this process or its ancestors.
 */
export function collectRunProcesses(rootPid: number, runId: string, rootExited = false): number[] {
  const rows = listProcesses();
  const children = new Map<number, number[]>();
  for (const row of rows) {
    const siblings = children.get(row.ppid) ?? [];
    siblings.push(row.pid);
    children.set(row.ppid, siblings);
  }
  const members = new Set<number>();
  // After the root exited its PID may be reused; a PGID or SID is never reused while a member lives.
  const seeds = rootExited ? findMarkedProcesses(runId) : [rootPid, ...findMarkedProcesses(runId)];
  for (const row of rows) if (row.pgid === rootPid || row.sid === rootPid) seeds.push(row.pid);
  const alive = new Set(rows.filter((row) => !row.zombie).map((row) => row.pid));
  const stack = seeds.filter((pid) => alive.has(pid));
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (members.has(pid) || !alive.has(pid)) continue;
    members.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  for (const pid of protectedPids(rows)) members.delete(pid);
  return [...members];
}

/**
 * Kills the whole run: stops every member first (so a fork loop cannot outpace the kill), then SIGKILLs,
 * repeating until no member is left or `rounds` is spent. `extraPids` feeds in members known another way
 * (a cgroup's process list). Pass `rootExited` once the root was reaped, so its PID (possibly reused) is
 * not signalled. Returns how many distinct PIDs were signalled.
 */
export async function killRunTree(
  rootPid: number,
  runId: string,
  options: { extraPids?: () => number[]; rounds?: number; rootExited?: boolean } = {},
): Promise<number> {
  const signalled = new Set<number>();
  const rounds = options.rounds ?? 40;
  const rootExited = options.rootExited ?? false;
  if (!rootExited) {
    signal(-rootPid, 'SIGKILL');
    signal(rootPid, 'SIGKILL');
  }
  for (let round = 0; round < rounds; round += 1) {
    const members = new Set([
      ...collectRunProcesses(rootPid, runId, rootExited),
      ...(options.extraPids?.() ?? []),
    ]);
    const rows = listProcesses();
    const living = new Set(rows.filter((row) => !row.zombie).map((row) => row.pid));
    for (const pid of members) if (!living.has(pid)) members.delete(pid);
    for (const pid of protectedPids(rows)) members.delete(pid);
    if (members.size === 0) break;
    for (const pid of members) signal(pid, 'SIGSTOP');
    for (const pid of members) {
      signal(pid, 'SIGKILL');
      signalled.add(pid);
    }
    await new Promise((resolve) => setTimeout(resolve, round < 5 ? 5 : 20));
  }
  return signalled.size;
}

/** Whether a PID is alive (signal 0 probe); zombies count as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** This process and its ancestors: never signalled, whatever the marker scan finds. */
function protectedPids(rows: ProcessRow[]): Set<number> {
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  const result = new Set<number>([0, 1]);
  let current: number | undefined = process.pid;
  while (current !== undefined && current > 0 && !result.has(current)) {
    result.add(current);
    current = byPid.get(current)?.ppid;
  }
  return result;
}

function listWithPs(): ProcessRow[] {
  const output = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,sess='], { encoding: 'utf8' });
  return output
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter((fields) => fields.length >= 4 && fields.every((value) => Number.isFinite(value)))
    .map(([pid = 0, ppid = 0, pgid = 0, sid = 0]) => ({ pid, ppid, pgid, sid, zombie: false }));
}
