import { execFileSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../sandbox/box.js';
import type { NetworkJoin } from '../sandbox/boxCommon.js';
import { LIFELINE_FD } from '../sandbox/bwrap.js';

/*
 * A box dies with the Keel process that started it, whenever Keel dies (issue 20: a SIGKILL a few
 * milliseconds after a command started left bwrap running with parent pid 1; its command ran to completion,
 * and an approved re-run landed the effect twice). bwrap's `--die-with-parent` is a PR_SET_PDEATHSIG set
 * *after* each fork, with no check that the parent is still there: a parent that dies first leaves the
 * child armed against init, that is, never. So every link of the chain is armed, then proved:
 *
 * 1. Keel → the pty child. The child is `setpriv --pdeathsig KILL`, which arms the signal against its parent
 *    and execs a shell that checks `$PPID` is still Keel (read after arming): if Keel died before, the
 *    parent is init or a subreaper and the launcher exits 125; if after, the signal kills it. (A Keel thread
 *    other than the forking one may still be exiting then: each thread's exit signals the children it
 *    inherits, so the last one's does.) That process joins the run's cgroups, opens the lifeline FIFO
 *    read-write as fd 3 and execs bwrap (the death signal survives exec; bwrap re-arms it too).
 * 2. bwrap → the box. bwrap arms the box's first process against itself just before it execs it
 *    (`--as-pid-1`: no separate init, so arming and exec happen in one process, in order). Its parent is
 *    outside the box's PID namespace, so `$PPID` proves nothing there; instead the first thing the box runs
 *    opens the lifeline FIFO for writing without blocking, which succeeds while a reader holds it and fails at
 *    once (exit 125, nothing run) when none does. The one reader is bwrap itself: fd 3 is its `--json-status-fd`,
 *    which bwrap keeps open for as long as it lives (it closes every other inherited fd, and the box's
 *    copy). So the box was armed while its parent was alive, and dies with it. Killing the box's PID 1
 *    kills the whole namespace.
 *
 * Keel itself must not hold the FIFO: a SIGKILLed Keel's threads exit one by one, and its file table (an
 * open reading end) outlives the thread whose exit killed bwrap by milliseconds, long enough for a box whose
 * arming came too late to pass the check against a dead bwrap (seen: 1 surviving box in 23 campaign trials).
 */

/**
 * Creates `<dir>/lifeline` (a FIFO), or reuses one already there, and returns its path. Null off Linux or when
 * `mkfifo` is missing (the box then runs without the in-box check; link 1 still holds).
 */
export function createLifeline(dir: string): string | null {
  if (process.platform !== 'linux') return null;
  const fifo = path.join(dir, 'lifeline');
  try {
    if (lstatSync(fifo).isFIFO()) return fifo;
    return null;
  } catch {
    // Not there yet.
  }
  const mkfifo = findExecutable('mkfifo');
  if (mkfifo === null) return null;
  try {
    execFileSync(mkfifo, ['-m', '600', fifo], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    return null;
  }
  return fifo;
}

let setprivPath: string | null | undefined;

/** `setpriv` (util-linux), looked up once; null off Linux or where it is missing. */
export function setprivExecutable(): string | null {
  if (process.platform !== 'linux') return null;
  setprivPath ??= findExecutable('setpriv');
  return setprivPath;
}

let bashPath: string | null | undefined;

/**
 * The launcher's first step: close every inherited fd but stdin, stdout and stderr. node-pty opens pty masters
 * without close-on-exec, so every later child of Keel inherited them: a box held the master of another
 * command's pty, or of the user's terminal (it could read that output before Keel, or type into that shell).
 * bash, as dash closes only fds 0-9; nothing (and /bin/sh) where there is no bash.
 */
function closeInherited(): { shell: string; close: string } {
  bashPath ??= process.platform === 'linux' ? findExecutable('bash') : null;
  if (bashPath === null) return { shell: '/bin/sh', close: '' };
  return {
    shell: bashPath,
    close:
      'if [ -d /proc/$$/fd ]; then for f in /proc/$$/fd/*; do k=${f##*/}; ' +
      'case $k in 0|1|2) ;; *) eval "exec $k>&-" 2>/dev/null ;; esac; done; fi; ',
  };
}

/**
 * The argv prefix that starts a box: on Linux with setpriv, arm the parent-death signal, prove the parent is
 * still this process (link 1 above), close every inherited fd but 0-2, join `procsFiles` (the run's cgroups),
 * open `lifeline` (when given) read-write as fd 3 for bwrap's `--json-status-fd`, and exec the rest. Without
 * setpriv, the same minus the first two.
 */
export function launcherArgv(
  procsFiles: readonly string[],
  lifeline: string | null = null,
  network: NetworkJoin | null = null,
  holder: number | null = null,
): string[] {
  const { shell, close } = closeInherited();
  const join =
    close +
    'l=$1; jp=$2; jn=$3; ju=$4; n=$5; shift 5; ' +
    'while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ' +
    `if [ -n "$l" ]; then exec ${LIFELINE_FD}<>"$l" || exit 125; fi; ` +
    (network === null ? '' : enterNetwork(network, shell, holder)) +
    'exec "$@"';
  const rest = [
    lifeline ?? '',
    network === null ? '' : String(network.pid),
    network?.net ?? '',
    network?.user ?? '',
    String(procsFiles.length),
    ...procsFiles,
  ];
  const setpriv = setprivExecutable();
  if (setpriv === null) {
    return process.platform !== 'linux' && procsFiles.length === 0 && lifeline === null
      ? []
      : [shell, '-c', join, 'keel-launch', ...rest];
  }
  const script = `[ "$PPID" = "$1" ] || exit 125; shift; ${join}`;
  return [
    setpriv,
    '--pdeathsig',
    'KILL',
    '--',
    shell,
    '-c',
    script,
    'keel-launch',
    String(process.pid),
    ...rest,
  ];
}

/** The fds the launcher holds a joined box's namespaces on, between the check and nsenter (above LIFELINE_FD). */
const NET_FD = 4;
const USER_FD = 5;

/**
 * The launcher's step that puts the box in a running background command's network namespace (issue #32):
 * open the namespace of `$jp`, check the opened file is the very namespace recorded when that command started
 * (a pid reused by another process, the host's namespace, fails here and nothing starts), then exec bwrap under
 * nsenter on those open files. The user namespace too when the box was made in one of its own (an unprivileged
 * Keel), since only its owner namespace may enter its network namespace.
 */
function enterNetwork(network: NetworkJoin, shell: string, holder: number | null): string {
  const nsenter = findExecutable('nsenter');
  if (nsenter === null)
    throw new Error('nsenter (util-linux) is missing: a background command cannot be joined');
  const open = (fd: number, ns: string, expected: string): string =>
    `exec ${fd}<"/proc/$jp/ns/${ns}" || exit 125; [ "$(readlink /proc/$$/fd/${fd})" = "${expected}" ] || exit 125; `;
  // Once inside, a shell closes the namespace fds before it execs bwrap, so the box never holds them.
  const closing = `${quoted(shell)} -c 'exec ${NET_FD}<&- ${USER_FD}<&-; exec "$@"' keel-joined`;
  // Issue #36, a box on a copy-on-write view: one nsenter enters the view's holder (its user and mount namespaces)
  // and the server's network. The server's user namespace is a child of the holder's (its box was started in the
  // holder too), so root of the holder's may enter its network; entering that child first, then the holder's (an
  // ancestor) as the view's own nsenter would, is refused by the kernel (EINVAL).
  const user =
    holder !== null
      ? `set -- "--user=/proc/${holder}/ns/user" "--mount=/proc/${holder}/ns/mnt" --preserve-credentials "$@"; `
      : network.user === undefined
        ? ''
        : open(USER_FD, 'user', '$ju') +
          `set -- "--user=/proc/$$/fd/${USER_FD}" --preserve-credentials "$@"; `;
  return (
    open(NET_FD, 'net', '$jn') +
    `set -- "--net=/proc/$$/fd/${NET_FD}" -- ${closing} "$@"; ` +
    user +
    `set -- ${quoted(nsenter)} "$@"; `
  );
}

function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
