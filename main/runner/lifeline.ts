import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../sandbox/box.js';

/*
 * A box dies with the Keel process that started it, whenever Keel dies (issue 20: a SIGKILL a few
 * milliseconds after a command started left bwrap running with parent pid 1; its command ran to completion,
 * and an approved re-run landed the effect twice). bwrap's `--die-with-parent` is a PR_SET_PDEATHSIG set
 * *after* each fork, with no check that the parent is still there: a parent that dies first leaves the
 * child armed against init, that is, never. So every link of the chain is armed, then proved:
 *
 * 1. Keel → the pty child. The child is `setpriv --pdeathsig KILL`, which arms the signal against its parent
 *    and execs a shell that checks `$PPID` is still Keel (read after arming): if Keel died before, the
 *    parent is init or a subreaper and the launcher exits 125; if after, the signal kills it. That process
 *    joins the run's cgroups and execs bwrap (the death signal survives exec; bwrap re-arms it too).
 * 2. bwrap → the box. bwrap arms its own signal before it lets the box's first process run, and that
 *    process (`--as-pid-1`: no separate init, so arming and exec happen in one process, in order) arms its
 *    own before it execs. Its parent is outside the box's PID namespace, so `$PPID` proves nothing there;
 *    instead the first thing the box runs opens this run's lifeline FIFO for writing, which succeeds at once
 *    while Keel holds the reading end and blocks (then times out, exit 125) once Keel is gone: the box was
 *    armed while Keel, hence bwrap, was alive. Killing the box's PID 1 kills the whole namespace.
 *
 * Only Keel ever opens a lifeline for reading (`O_CLOEXEC`, so no child inherits it) and only before the
 * box starts; the command inside runs after the check, so it cannot hold the FIFO open in Keel's place.
 */

/** A FIFO whose reading end this process holds while one box runs. */
export interface Lifeline {
  /** Host path of the FIFO (bound read-only into the box by `wrapCommand`'s `lifeline`). */
  path: string;
  /** Closes the reading end: from then on the box's check fails. Idempotent. */
  close(): void;
}

/**
 * Creates `<dir>/lifeline` (a FIFO) and opens its reading end without blocking. Null off Linux or when
 * `mkfifo` is missing (the box then runs without the in-box check; link 1 still holds).
 */
export function openLifeline(dir: string): Lifeline | null {
  if (process.platform !== 'linux') return null;
  const mkfifo = findExecutable('mkfifo');
  if (mkfifo === null) return null;
  const fifo = path.join(dir, 'lifeline');
  try {
    execFileSync(mkfifo, ['-m', '600', fifo], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    return null;
  }
  let fd: number | null = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  return {
    path: fifo,
    close() {
      if (fd === null) return;
      closeSync(fd);
      fd = null;
    },
  };
}

let setprivPath: string | null | undefined;

/** `setpriv` (util-linux), looked up once; null off Linux or where it is missing. */
export function setprivExecutable(): string | null {
  if (process.platform !== 'linux') return null;
  setprivPath ??= findExecutable('setpriv');
  return setprivPath;
}

/**
 * The argv prefix that starts a box: on Linux with setpriv, arm the parent-death signal, prove the parent is
 * still this process (link 1 above), then join `procsFiles` (the run's cgroups) and exec the rest. Without
 * setpriv, only the cgroup join (empty when there are no cgroups either).
 */
export function launcherArgv(procsFiles: readonly string[]): string[] {
  const join =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  const setpriv = setprivExecutable();
  if (setpriv === null) {
    return procsFiles.length === 0
      ? []
      : ['/bin/sh', '-c', join, 'keel-launch', String(procsFiles.length), ...procsFiles];
  }
  const script = `[ "$PPID" = "$1" ] || exit 125; shift; ${join}`;
  return [
    setpriv,
    '--pdeathsig',
    'KILL',
    '--',
    '/bin/sh',
    '-c',
    script,
    'keel-launch',
    String(process.pid),
    String(procsFiles.length),
    ...procsFiles,
  ];
}
