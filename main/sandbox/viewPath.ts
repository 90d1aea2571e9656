// Issue #36: real paths under a copy-on-write view's holder (`/proc/<pid>/root/...`, main/sandbox/overlayView.ts).
// realpath(3) and readlink(/proc/self/fd/N) answer in Keel's own mount namespace, where the view's mount point is an
// empty folder: a root under the holder would resolve to that folder and a confined write would land there, not in
// the view (test/main/sandbox/viewPath.test.ts). These answer in the holder's namespace and keep the prefix.
import fs from 'node:fs';

/** `/proc/<pid>/root`, the prefix of a path seen through another process's root. */
const VIEW_PREFIX = /^\/proc\/[1-9]\d*\/root(?=\/|$)/;

/** O_PATH (Linux): a descriptor naming a file without opening it for reading (no FIFO blocks, no device opens). */
const O_PATH = 0o10000000;

/** The `/proc/<pid>/root` prefix of `target`, or undefined for an ordinary path. */
export function viewPrefixOf(target: string): string | undefined {
  return process.platform === 'linux' ? VIEW_PREFIX.exec(target)?.[0] : undefined;
}

/** How many links one resolution follows before it says ELOOP (the kernel's own bound). */
const MAX_LINKS = 40;

/**
 * `fs.realpathSync.native`, except under a holder's root: there the path is walked in the holder's namespace (each
 * link's text read; an absolute target starts again at the prefix, as it would for a process inside, where the
 * kernel would take Keel's own `/`), then the link-free result is opened and its descriptor's path, which the kernel
 * gives in the holder's namespace, is returned with the prefix. Throws as realpath does (ENOENT, ELOOP, ENOTDIR...).
 */
export function realpathNative(target: string): string {
  const prefix = viewPrefixOf(target);
  if (prefix === undefined) return fs.realpathSync.native(target);
  const fd = fs.openSync(withinView(prefix, target.slice(prefix.length)), O_PATH | O_NOFOLLOW);
  try {
    return withPrefix(prefix, fs.readlinkSync(`/proc/self/fd/${fd}`));
  } finally {
    fs.closeSync(fd);
  }
}

/** O_NOFOLLOW: the walked path is link-free; a link swapped in since is named, never followed out of the view. */
const O_NOFOLLOW = fs.constants.O_NOFOLLOW;

/**
 * `rest` (a path in the holder's namespace) walked from `prefix` with every link followed there: `..` never climbs
 * above the prefix (the namespace's `/`). Missing components are an ENOENT from the open that follows.
 */
function withinView(prefix: string, rest: string): string {
  let current = prefix;
  const pending = rest.split('/').filter((part) => part !== '' && part !== '.');
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '..') {
      if (current !== prefix) current = current.slice(0, current.lastIndexOf('/'));
      continue;
    }
    const next = `${current}/${part}`;
    if (fs.lstatSync(next, { throwIfNoEntry: false })?.isSymbolicLink() !== true) {
      current = next;
      continue;
    }
    links += 1;
    if (links > MAX_LINKS)
      throw Object.assign(new Error(`ELOOP: too many symbolic links, realpath '${prefix}${rest}'`), {
        code: 'ELOOP',
      });
    const text = fs.readlinkSync(next);
    if (text.startsWith('/')) current = prefix;
    pending.unshift(...text.split('/').filter((one) => one !== '' && one !== '.'));
  }
  return current;
}

/**
 * The path descriptor `fd` names, in the terms of `expected`: under a holder's root, the prefix is put back on the
 * kernel's answer (which is in the holder's namespace).
 */
export function descriptorPath(fd: number, expected: string): string {
  const actual = fs.readlinkSync(`/proc/self/fd/${fd}`);
  const prefix = viewPrefixOf(expected);
  return prefix === undefined ? actual : withPrefix(prefix, actual);
}

function withPrefix(prefix: string, inside: string): string {
  return inside === '/' ? prefix : `${prefix}${inside}`;
}

/** The pid of the holder whose root `target` is seen through (`/proc/<pid>/root/...`), or undefined. */
export function viewPidOf(target: string): number | undefined {
  const prefix = viewPrefixOf(target);
  return prefix === undefined ? undefined : Number(prefix.split('/')[2]);
}

/** `target` as the holder's namespace names it (its `/proc/<pid>/root` prefix taken off); other paths unchanged. */
export function insideView(target: string): string {
  const prefix = viewPrefixOf(target);
  if (prefix === undefined) return target;
  const rest = target.slice(prefix.length);
  return rest === '' ? '/' : rest;
}
