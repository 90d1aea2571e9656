import fs from 'node:fs';
import path from 'node:path';

/*
 * Read-only looks at /proc for the kill campaign (test/main/cli/killDuringCommand.test.ts): which processes
 * belong to a box, found four independent ways (descent from Keel, the run marker in the environment, the
 * box's PID namespace, the working folder or the token in the command line). Nothing here signals or waits
 * on a process, so looking can never change what a box does (the campaign kills a survivor only after it
 * has read the ledger, and then the whole namespace at once). Linux only.
 */

/** One process as the campaign saw it. */
export type SeenProcess = {
  pid: number;
  ppid: number;
  /** `readlink /proc/PID/ns/pid`, e.g. `pid:[4026532301]`. */
  pidNamespace: string | null;
  /** The NSpid line of /proc/PID/status: its PID in each namespace, outermost first (`1` last: a box's init). */
  nsPids: number[];
  cwd: string | null;
  cmdline: string;
  state: string;
  /** Its KEEL_RUN_ID, when its environment carries one. */
  runId: string | null;
  /** Start time in clock ticks since boot: with the pid, names one process even after PID reuse. */
  startTicks: string;
};

/** What makes a process one of the campaign's: any single criterion is enough. */
export type BoxCriteria = {
  /** Keel's pid: every descendant. */
  root?: number;
  /** Run ids (from the session's `boxes/` records): the marker in a process's environment. */
  runIds?: ReadonlySet<string>;
  /** PID namespaces seen earlier for this trial's box. */
  pidNamespaces?: ReadonlySet<string>;
  /**
   * Only processes started by then (clock ticks since boot, `ticksNow()` at the kill) match by namespace: the
   * kernel reuses a dead namespace's inode number at once, for the next box anyone starts.
   */
  startedBy?: number;
  /** A folder: a process working in it or below (the project). */
  folder?: string;
  /** Text in the command line (the trial's token). */
  token?: string;
  /** Processes seen earlier (pid → start time), still the same process. */
  known?: ReadonlyMap<number, string>;
};

/** This process's own PID namespace (the host's, for the campaign). */
export const HOST_PID_NAMESPACE = readLink('/proc/self/ns/pid');

function readLink(file: string): string | null {
  try {
    return fs.readlinkSync(file);
  } catch {
    return null;
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Reads one process, or null when it is gone (or a zombie: already dead, only its reaping is missing). */
export function readProcess(pid: number): SeenProcess | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '?';
  if (state === 'Z' || state === 'X') return null;
  const status = readText(`/proc/${pid}/status`) ?? '';
  const nsLine = /^NSpid:\s*(.*)$/m.exec(status)?.[1] ?? '';
  const environ = readText(`/proc/${pid}/environ`) ?? '';
  const runId = /(?:^|\0)KEEL_RUN_ID=([^\0]*)/.exec(environ)?.[1] ?? null;
  return {
    pid,
    ppid: Number(fields[1]),
    pidNamespace: readLink(`/proc/${pid}/ns/pid`),
    nsPids: nsLine.split(/\s+/).filter(Boolean).map(Number),
    cwd: readLink(`/proc/${pid}/cwd`),
    cmdline: (readText(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim(),
    state,
    runId,
    startTicks: fields[19] ?? '',
  };
}

/** Every live process that meets one of `criteria`. */
export function findBoxProcesses(criteria: BoxCriteria): SeenProcess[] {
  const all: SeenProcess[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const seen = readProcess(Number(entry));
    if (seen !== null) all.push(seen);
  }
  const descendants = new Set<number>();
  if (criteria.root !== undefined) {
    descendants.add(criteria.root);
    for (let grew = true; grew;) {
      grew = false;
      for (const process of all) {
        if (!descendants.has(process.pid) && descendants.has(process.ppid)) {
          descendants.add(process.pid);
          grew = true;
        }
      }
    }
  }
  const folder = criteria.folder;
  return all.filter((process) => {
    if (process.pid === criteria.root) return false;
    if (descendants.has(process.pid)) return true;
    if (criteria.known?.get(process.pid) === process.startTicks) return true;
    if (process.runId !== null && criteria.runIds?.has(process.runId) === true) return true;
    if (
      process.pidNamespace !== null &&
      criteria.pidNamespaces?.has(process.pidNamespace) === true &&
      (criteria.startedBy === undefined || Number(process.startTicks) <= criteria.startedBy)
    )
      return true;
    const cwd = process.cwd?.replace(/ \(deleted\)$/, '');
    if (folder !== undefined && cwd !== undefined && (cwd === folder || cwd.startsWith(`${folder}/`)))
      return true;
    return criteria.token !== undefined && process.cmdline.includes(criteria.token);
  });
}

/** Clock ticks since boot now (the unit of /proc/PID/stat's start time; USER_HZ is 100 on Linux). */
export function ticksNow(): number {
  const uptime = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return Math.ceil(uptime * 100);
}

/** The run ids of every box recorded under `home`'s sessions (`<session>/boxes/<runId>.json`). */
export function recordedRunIds(home: string): Set<string> {
  const ids = new Set<string>();
  const sessions = path.join(home, 'sessions');
  let names: string[] = [];
  try {
    names = fs.readdirSync(sessions);
  } catch {
    return ids;
  }
  for (const session of names) {
    try {
      for (const file of fs.readdirSync(path.join(sessions, session, 'boxes'))) {
        if (file.endsWith('.json')) ids.add(file.slice(0, -'.json'.length));
      }
    } catch {
      // No box recorded in this session.
    }
  }
  return ids;
}

/** The PID namespaces of `processes` other than the host's: the boxes' own. */
export function boxNamespaces(processes: readonly SeenProcess[]): Set<string> {
  return new Set(
    processes
      .map((process) => process.pidNamespace)
      .filter((ns): ns is string => ns !== null && ns !== HOST_PID_NAMESPACE),
  );
}

/**
 * Kills what is left of a box, the namespace first: SIGKILL to a namespace's init (its last NSpid is 1)
 * ends every process in it at once, so no part of a command runs on while another part dies (killing a
 * `sleep` alone would let the `echo` after it run). Then any other process still named.
 */
export function killSurvivors(survivors: readonly SeenProcess[]): void {
  const still = (process: SeenProcess): boolean =>
    readProcess(process.pid)?.startTicks === process.startTicks;
  for (const process of survivors) {
    if (process.nsPids.at(-1) === 1 && process.nsPids.length > 1 && still(process)) {
      try {
        globalThis.process.kill(process.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
  for (const process of survivors) {
    if (!still(process)) continue;
    try {
      globalThis.process.kill(process.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
