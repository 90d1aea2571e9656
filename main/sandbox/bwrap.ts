import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NetworkPolicy, WrapOptions, WrappedCommand } from './boxCommon.js';
import { BOX_PROXY_PORT, HOME_TOOLCHAINS, proxyEnvironment } from './boxCommon.js';

/** Where the allowlist proxy's Unix socket appears inside the box (under the private /run). */
export const BOX_PROXY_SOCKET = '/run/keel/proxy.sock';
/** Where the run's lifeline FIFO appears inside the box. */
export const BOX_LIFELINE = '/run/keel/alive';
/**
 * The fd on which Keel's launcher opens the lifeline FIFO (read-write) before it execs bwrap, passed as
 * `--json-status-fd`: the one inherited fd bwrap keeps open for as long as it lives (it closes the others, and
 * the box's copy), so the FIFO has a reader exactly while bwrap is alive. See main/runner/lifeline.ts.
 */
export const LIFELINE_FD = 3;

/**
 * The confinement flags every bwrap box gets. As root, bwrap confines nothing without `--cap-drop ALL`
 * (the command could remount / read-write); `--new-session` stops TIOCSTI keystroke injection into the
 * terminal that launched it; `--unshare-pid` makes killing bwrap kill the whole tree, setsid escapees too.
 */
export const BWRAP_SECURITY_FLAGS: readonly string[] = [
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
  '--unshare-pid',
  '--unshare-net',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
];

/** Host files that hold secrets readable by root even without capabilities (root owns them). */
const HOST_SECRET_FILES = [
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/shadow-',
  '/etc/gshadow-',
  '/etc/ssl/private',
];

/**
 * The mounts every box starts from, the trial one included: root read-only, private /dev and /proc, and a
 * private /tmp (host Unix sockets such as docker.sock or ssh-agent live there, and a read-only bind does not
 * stop connect() on a socket).
 */
const BWRAP_BASE_MOUNTS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

/** The arguments of a trial box, with the same flags as a real one, used to check that bwrap works here. */
export function bwrapProbeArgs(): string[] {
  return [...BWRAP_SECURITY_FLAGS, ...BWRAP_BASE_MOUNTS];
}

type Mount = { kind: 'hide' | 'expose' | 'write' | 'pin'; path: string };
const mountRank: Record<Mount['kind'], number> = { hide: 0, expose: 1, write: 2, pin: 3 };

/**
 * Builds the bwrap argv for one command: root read-only, private /dev, /proc, /tmp and /run, the
 * workspace and writable paths bound read-write, the real home and host secret files hidden, no network
 * (or only the allowlist proxy bridged in over a Unix socket).
 */
export function buildBwrapArgs(
  options: WrapOptions & { cwd: string; network: NetworkPolicy },
): WrappedCommand {
  const bwrap = options.sandbox.executable ?? 'bwrap';
  const hostHome = options.hostHome ?? os.homedir();
  const env: Record<string, string> = { TMPDIR: '/tmp' };
  // A private /run too, for the same reason as /tmp (D-Bus and other host sockets live there).
  const security =
    options.sharedNetwork === undefined
      ? BWRAP_SECURITY_FLAGS
      : BWRAP_SECURITY_FLAGS.filter((flag) => flag !== '--unshare-net');
  const args = [...security, ...BWRAP_BASE_MOUNTS, '--tmpfs', '/run'];

  if (options.home === undefined && options.homeVariable !== undefined) {
    env.HOME = options.homeVariable;
  } else if (options.home === undefined) {
    args.push('--dir', '/tmp/home');
    env.HOME = '/tmp/home';
  } else {
    env.HOME = options.home;
  }

  const mounts: Mount[] = [];
  const hide = (target: string): void => {
    // A service account's home can be `/`: hiding it would hide the whole system.
    if (depth(target) > 0 && pathExists(target)) mounts.push({ kind: 'hide', path: target });
  };
  hide(hostHome);
  for (const toolchain of HOME_TOOLCHAINS) {
    const target = path.join(hostHome, toolchain);
    if (pathExists(target)) mounts.push({ kind: 'expose', path: target });
  }
  if (pathExists(path.join(hostHome, '.rustup'))) env.RUSTUP_HOME = path.join(hostHome, '.rustup');
  for (const file of [...HOST_SECRET_FILES, ...sshHostKeys()]) hide(file);
  for (const target of options.hidden ?? []) hide(target);
  for (const target of [options.workspace, ...(options.writable ?? [])]) {
    mounts.push({ kind: 'write', path: target });
  }
  if (options.home !== undefined) mounts.push({ kind: 'write', path: options.home });
  for (const target of options.readOnly ?? []) {
    if (pathExists(target)) mounts.push({ kind: 'pin', path: target });
  }

  // Shallow first, so a deeper mount (the workspace inside the hidden home, `.git/hooks` inside the
  // workspace) lands on top of its parent; on the same path, write beats hide and pin beats write.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || mountRank[a.kind] - mountRank[b.kind]);
  for (const mount of mounts) args.push(...mountArgs(mount));

  let inner = ['bash', '-c', options.command];
  if (options.network !== 'none') {
    const proxy = options.proxy;
    if (proxy === undefined || !('socketPath' in proxy)) {
      throw new Error(
        'The bwrap box reaches the allowlist proxy over a Unix socket; start the proxy on a socket path.',
      );
    }
    args.push('--bind', proxy.socketPath, BOX_PROXY_SOCKET);
    const port = options.sharedNetwork?.proxyPort ?? BOX_PROXY_PORT;
    inner = [
      'bash',
      '-c',
      proxyBootstrap(options.sandbox.socat ?? 'socat', port),
      'keel-box',
      options.command,
    ];
    Object.assign(env, proxyEnvironment(`http://127.0.0.1:${port}`));
  }

  if (options.lifeline !== undefined) {
    // --as-pid-1: the process bwrap arms against itself is the one that execs the check, in that order (a
    // separate init would arm itself concurrently with the command starting). The check opens the FIFO
    // bwrap holds as its status fd: it proves bwrap alive after the arming. See main/runner/lifeline.ts.
    args.push(
      '--as-pid-1',
      '--json-status-fd',
      String(LIFELINE_FD),
      '--ro-bind',
      options.lifeline,
      BOX_LIFELINE,
    );
    // A non-blocking open for writing succeeds while the FIFO has a reader and fails at once (ENXIO) when
    // it has none: no wait, so a box that lost the race never lingers either.
    const check = `dd if=/dev/null of=${BOX_LIFELINE} oflag=nonblock conv=notrunc,nocreat status=none 2>/dev/null || exit 125; exec "$@"`;
    inner = ['/bin/sh', '-c', check, 'keel-alive', ...inner];
  }

  args.push('--chdir', options.cwd, '--', ...inner);
  return { argv: [bwrap, ...args], env };
}

/**
 * Starts socat inside the box so 127.0.0.1:3128 forwards to the proxy socket, waits until it listens
 * (reading /proc/net/tcp rather than connecting, so the proxy sees no stray request), then runs the command.
 */
function proxyBootstrap(socat: string, port: number): string {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  return [
    `${quote(socat)} TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${BOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &`,
    `i=0; while ! grep -q ':${portHex} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do`,
    '  i=$((i+1)); [ "$i" -gt 400 ] && break; sleep 0.005;',
    'done',
    'exec bash -c "$1"',
  ].join('\n');
}

function mountArgs(mount: Mount): string[] {
  switch (mount.kind) {
    case 'hide':
      return isDirectory(mount.path) ? ['--tmpfs', mount.path] : ['--ro-bind', '/dev/null', mount.path];
    case 'expose':
    case 'pin':
      return ['--ro-bind', mount.path, mount.path];
    case 'write':
      return ['--bind', mount.path, mount.path];
  }
}

function sshHostKeys(): string[] {
  try {
    return readdirSync('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => path.join('/etc/ssh', name));
  } catch {
    return [];
  }
}

function depth(target: string): number {
  return path.resolve(target).split(path.sep).filter(Boolean).length;
}

function pathExists(target: string): boolean {
  try {
    lstatSync(target);
    return existsSync(target);
  } catch {
    return false;
  }
}

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
