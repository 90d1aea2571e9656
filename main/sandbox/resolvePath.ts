// Resolution: a tool's path argument becomes a real absolute path inside the workspace, or a refusal.
// Every path argument of every tool goes through resolveInWorkspace. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { OUTSIDE_ROOT, PathEscapeError, errnoCode, refuse, refuseFile } from './pathErrors.js';
import { realpathNative, viewPrefixOf } from './viewPath.js';

/** Options of resolveInWorkspace. */
export interface ResolveOptions {
  /** The tool argument's name, used in error messages ("path", "cwd"...). */
  argName: string;
  /** The caller will write: the workspace root itself and existing directories are refused. */
  forWrite?: boolean;
  /**
   * Folders no argument may reach although they lie inside the root (the Keel home, when the project holds
   * it): refused like an escape. One that holds the root itself does not count (a checkout inside the home).
   */
  hidden?: readonly string[];
}

const MAX_ARG_LENGTH = 4096;
const MAX_SYMLINKS = 40;
const MAX_RETRIES = 8;

/** The workspace root as the filesystem spells it, with its identity (for the inode comparison). */
export interface RealRoot {
  real: string;
  stat: fs.Stats;
}

/** The real path and identity of the workspace root; PathEscapeError (`root_invalid`) if it is no folder. */
function realRoot(root: string): RealRoot {
  let real: string;
  try {
    real = realpathNative(root);
  } catch {
    throw new PathEscapeError(
      'root',
      'root_invalid',
      `The workspace folder ${JSON.stringify(root)} does not exist.`,
    );
  }
  const stat = fs.statSync(real);
  if (!stat.isDirectory()) {
    throw new PathEscapeError(
      'root',
      'root_invalid',
      `The workspace ${JSON.stringify(root)} is not a folder.`,
    );
  }
  return { real, stat };
}

/** The components of a path, without empty ones and `.` (`..` kept: it is resolved against links). */
function splitComponents(p: string): string[] {
  const separators = process.platform === 'win32' ? /[\\/]+/ : /\/+/;
  return p.split(separators).filter((c) => c !== '' && c !== '.');
}

function checkArgSyntax(arg: string, argName: string): void {
  if (typeof arg !== 'string' || arg.length === 0)
    throw refuse(argName, String(arg), 'empty', 'path is empty');
  if (arg.includes('\0')) throw refuse(argName, arg, 'nul_byte', 'path contains a NUL byte');
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
  if (/[\u0001-\u001f\u007f]/.test(arg)) {
    throw refuse(argName, arg, 'control_char', 'path contains a control character (newline, tab, escape...)');
  }
  if (arg.length > MAX_ARG_LENGTH) {
    throw refuse(argName, arg, 'too_long', `path is longer than ${MAX_ARG_LENGTH} characters`);
  }
  // `~` is never expanded (that would be the user's real home); name a file starting with ~ as ./~name.
  if (arg.startsWith('~')) {
    throw refuse(
      argName,
      arg,
      'home',
      '"~" is not expanded; use a path relative to the workspace (./~name for a file named ~name)',
    );
  }
  if (process.platform === 'win32') {
    const afterDrive = arg.replace(/^[a-zA-Z]:[\\/]/, '');
    if (/^[\\/]{2}/.test(arg) || /^[a-zA-Z]:(?![\\/])/.test(arg) || afterDrive.includes(':')) {
      throw refuse(
        argName,
        arg,
        'windows_device',
        'UNC, device, drive-relative and alternate-stream paths are refused',
      );
    }
  }
}

/**
 * Follows the path component by component with the kernel's semantics (a symlink's text replaces it, `..`
 * after a symlink goes to the link target's parent), tolerating components that do not exist yet.
 */
function walkComponents(
  start: string,
  components: string[],
  argName: string,
  arg: string,
  viewRoot?: string,
): string {
  // Issue #36: under a view's holder (`/proc/<pid>/root`) the walk is in the holder's namespace: `/` is that
  // prefix, for `..` and for a link's absolute target alike (a link to a file of the checkout, as the box names it,
  // stays in the view, as it does in a copy).
  const top = viewRoot ?? '';
  let current = start;
  const pending = [...components];
  let links = 0;
  let retries = 0;
  while (pending.length > 0) {
    const component = pending.shift() as string;
    if (component === '..') {
      if (current !== top) current = path.dirname(current);
      continue;
    }
    const next = path.join(current, component);
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(next);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENAMETOOLONG') throw refuse(argName, arg, 'too_long', 'a path component is too long');
      // ENOENT, ENOTDIR, EACCES: nothing to follow here; the open later reports it.
      stat = undefined;
    }
    if (stat?.isSymbolicLink()) {
      links += 1;
      if (links > MAX_SYMLINKS) {
        throw refuse(argName, arg, 'symlink_loop', 'too many symbolic links (a link loop?)');
      }
      let target: string;
      try {
        target = fs.readlinkSync(next);
      } catch {
        // The link was replaced between lstat and readlink: look at this component again.
        retries += 1;
        if (retries > MAX_RETRIES) {
          throw refuseFile(argName, arg, 'changed', 'the path kept changing while it was resolved');
        }
        pending.unshift(component);
        continue;
      }
      if (path.isAbsolute(target)) current = viewRoot ?? path.parse(target).root;
      pending.unshift(...splitComponents(target));
      continue;
    }
    current = next;
  }
  return current;
}

/** Replaces the deepest existing ancestor by the filesystem's canonical spelling (case, normalization, links). */
function canonicalize(candidate: string): string {
  const tail: string[] = [];
  let probe = candidate;
  for (;;) {
    try {
      return path.join(realpathNative(probe), ...tail);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ELOOP') throw error;
      const parent = path.dirname(probe);
      if (parent === probe) return candidate;
      tail.unshift(path.basename(probe));
      probe = parent;
    }
  }
}

function isLexicallyWithin(rootReal: string, candidate: string): boolean {
  const rel = path.relative(rootReal, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Containment by the filesystem's own answer: lexically inside, or (on case-insensitive / normalizing
 * filesystems) the candidate's ancestor at the root's depth is the very same directory as the root.
 */
export function isWithinRoot(root: RealRoot, candidate: string): boolean {
  if (isLexicallyWithin(root.real, candidate)) return true;
  const folded = (p: string) => p.normalize('NFC').toLowerCase();
  if (!isLexicallyWithin(folded(root.real), folded(candidate))) return false;
  const depth = splitComponents(root.real).length;
  const ancestor = path.join(path.parse(candidate).root, ...splitComponents(candidate).slice(0, depth));
  try {
    const stat = fs.statSync(ancestor);
    return stat.dev === root.stat.dev && stat.ino === root.stat.ino;
  } catch {
    return false;
  }
}

/** The hidden folders that apply under `root`, as the filesystem spells them: those inside it, not those holding it. */
function hiddenFoldersOf(root: RealRoot, hidden: readonly string[] | undefined): RealRoot[] {
  const folders: RealRoot[] = [];
  for (const folder of hidden ?? []) {
    let real: string;
    let stat: fs.Stats;
    try {
      real = realpathNative(folder);
      stat = fs.statSync(real);
    } catch {
      continue; // a folder that does not exist hides nothing
    }
    const own = { real, stat };
    if (!isWithinRoot(own, root.real) && isWithinRoot(root, real)) folders.push(own);
  }
  return folders;
}

/**
 * Real paths of the `hidden` folders a walk under `root` must skip (those inside it; one holding the root is
 * the session's own and hides nothing there). For listings and searches that walk without resolving each name.
 */
export function hiddenFoldersUnder(root: string, hidden: readonly string[] | undefined): string[] {
  if (!hidden || hidden.length === 0) return [];
  return hiddenFoldersOf(realRoot(root), hidden).map((folder) => folder.real);
}

/** True when `realPath` is one of `folders` (real paths, from hiddenFoldersUnder) or lies inside one. */
export function isInHiddenFolder(folders: readonly string[], realPath: string): boolean {
  return folders.some((folder) => isLexicallyWithin(folder, realPath));
}

/** resolveInWorkspace against a root already made real: the real path inside it, or a refusal. */
function resolveWithRoot(root: RealRoot, arg: string, options: ResolveOptions): string {
  const { argName } = options;
  checkArgSyntax(arg, argName);
  // Issue #36: an absolute path under a view's holder (`/proc/<pid>/root/...`) is walked from that prefix: the magic
  // link `root` would otherwise be followed to Keel's own `/`, where the view is an empty folder.
  const prefix = viewPrefixOf(root.real);
  const viewed =
    prefix !== undefined && path.isAbsolute(arg) && (arg === prefix || arg.startsWith(`${prefix}/`));
  const start = viewed ? prefix : path.isAbsolute(arg) ? path.parse(arg).root : root.real;
  const components = splitComponents(viewed ? arg.slice(prefix.length) : arg);
  // An absolute argument outside the prefix is a host path (refused below unless it is the root's); a relative one,
  // or one under the prefix, is walked in the holder's namespace.
  const inView = prefix !== undefined && (viewed || !path.isAbsolute(arg));
  let resolved: string;
  try {
    resolved = canonicalize(walkComponents(start, components, argName, arg, inView ? prefix : undefined));
  } catch (error) {
    if (error instanceof PathEscapeError) throw error;
    if (errnoCode(error) === 'ELOOP')
      throw refuse(argName, arg, 'symlink_loop', 'too many symbolic links (a link loop?)');
    throw error;
  }
  // The resolved path is not shown: outside the workspace it is a host path the model has no use for (the
  // Keel home, a session id), and the argument it wrote is quoted already.
  if (!isWithinRoot(root, resolved)) {
    throw refuse(argName, arg, 'escape', `path escapes the workspace: it leads ${OUTSIDE_ROOT}`);
  }
  if (hiddenFoldersOf(root, options.hidden).some((folder) => isWithinRoot(folder, resolved))) {
    throw refuse(
      argName,
      arg,
      'hidden',
      "this is Keel's own data folder (other sessions' records and settings), which no tool may read or change",
    );
  }
  if (options.forWrite) {
    if (resolved === root.real)
      throw refuseFile(argName, arg, 'is_directory', 'this is the workspace folder itself');
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(resolved);
    } catch {
      stat = undefined;
    }
    if (stat?.isDirectory()) throw refuseFile(argName, arg, 'is_directory', 'this is a folder, not a file');
  }
  return resolved;
}

/**
 * Resolves a tool's path argument to an absolute real path inside the workspace (symlinks followed, also
 * for paths that do not exist yet), or throws PathEscapeError naming the argument and the reason.
 */
export function resolveInWorkspace(root: string, arg: string, options: ResolveOptions): string {
  return resolveWithRoot(realRoot(root), arg, options);
}

/** True when `realPath` (already resolved) is the workspace root or inside it. */
export function isInsideWorkspace(root: string, realPath: string): boolean {
  return isWithinRoot(realRoot(root), realPath);
}

/** A write or read target: the argument, its real path, and the folders from the root down to it. */
export interface Target {
  argName: string;
  arg: string;
  root: RealRoot;
  realPath: string;
  /** The real folder the file is in. */
  dirPath: string;
  /** The file's name in that folder. */
  name: string;
  /** The folders from the root (excluded) down to `dirPath`. */
  dirComponents: string[];
}

/** Resolves `arg` to a file target inside the workspace; the workspace root itself is refused. */
export function prepareTarget(
  root: string,
  arg: string,
  argName: string,
  forWrite: boolean,
  hidden?: readonly string[],
): Target {
  const realRootInfo = realRoot(root);
  const realPath = resolveWithRoot(realRootInfo, arg, { argName, forWrite, ...(hidden ? { hidden } : {}) });
  if (realPath === realRootInfo.real) {
    throw refuseFile(argName, arg, 'is_directory', 'this is the workspace folder itself, not a file');
  }
  const components = splitComponents(path.relative(realRootInfo.real, realPath));
  const name = components.pop() as string;
  return {
    argName,
    arg,
    root: realRootInfo,
    realPath,
    dirPath: path.dirname(realPath),
    name,
    dirComponents: components,
  };
}

/**
 * Resolves the folder of `arg` inside the workspace and keeps its last component as the name itself: a
 * link at that name is what gets replaced, never followed. Refuses what resolveInWorkspace refuses.
 */
export function prepareTargetAtName(root: string, arg: string, argName: string): Target {
  checkArgSyntax(arg, argName);
  const components = splitComponents(arg);
  const name = components.pop();
  if (name === undefined || name === '..') {
    throw refuseFile(argName, arg, 'is_directory', 'this names a folder, not a file');
  }
  const realRootInfo = realRoot(root);
  const parentArg = path.join(path.isAbsolute(arg) ? path.parse(arg).root : '.', ...components);
  const dirPath = resolveWithRoot(realRootInfo, parentArg, { argName });
  return {
    argName,
    arg,
    root: realRootInfo,
    realPath: path.join(dirPath, name),
    dirPath,
    name,
    dirComponents: splitComponents(path.relative(realRootInfo.real, dirPath)),
  };
}
