// Path confinement: every path argument of every tool goes through resolveInWorkspace, and every file
// read or write by a tool goes through readFileConfined / writeFileConfined. See README.md.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { protectionReason } from './protectedPaths.js';

/** Why a path argument was refused before any file was touched. */
export type PathRefusal =
  | 'escape'
  | 'nul_byte'
  | 'control_char'
  | 'empty'
  | 'home'
  | 'too_long'
  | 'symlink_loop'
  | 'windows_device'
  | 'root_invalid';

/** Thrown when a path argument lands outside the workspace or is malformed; the message names the argument. */
export class PathEscapeError extends Error {
  override readonly name = 'PathEscapeError';
  constructor(
    readonly argName: string,
    readonly code: PathRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Why a confined read or write refused a file that is inside the workspace. */
export type FileRefusal =
  | 'not_found'
  | 'not_directory'
  | 'is_directory'
  | 'not_regular'
  | 'hard_linked'
  | 'too_large'
  | 'exists'
  | 'changed'
  | 'protected'
  | 'denied'
  | 'io';

/** Thrown by confined reads and writes for a file inside the workspace that is unsafe or unusable. */
export class ConfinedFileError extends Error {
  override readonly name = 'ConfinedFileError';
  constructor(
    readonly argName: string,
    readonly code: FileRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Options of resolveInWorkspace. */
export interface ResolveOptions {
  /** The tool argument's name, used in error messages ("path", "cwd"...). */
  argName: string;
  /** The caller will write: the workspace root itself and existing directories are refused. */
  forWrite?: boolean;
}

/** How an opened file is proven to be the confined one (tests select; production uses the default). */
export type Pinning = 'procfd' | 'portable';

const MAX_ARG_LENGTH = 4096;
const MAX_SYMLINKS = 40;
const MAX_RETRIES = 8;
const { constants } = fs;
// O_NOFOLLOW / O_DIRECTORY do not exist on Windows; there the after-open verification carries the load.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const PROC_FD_AVAILABLE = process.platform === 'linux' && fs.existsSync('/proc/self/fd');
const DEFAULT_PINNING: Pinning = PROC_FD_AVAILABLE ? 'procfd' : 'portable';

function quoteArg(arg: string): string {
  const shown = arg.length > 200 ? `${arg.slice(0, 200)}…` : arg;
  return JSON.stringify(shown);
}

function refuse(argName: string, arg: string, code: PathRefusal, why: string): PathEscapeError {
  return new PathEscapeError(argName, code, `Argument "${argName}" (${quoteArg(arg)}): ${why}.`);
}

function refuseFile(argName: string, arg: string, code: FileRefusal, why: string): ConfinedFileError {
  return new ConfinedFileError(argName, code, `Argument "${argName}" (${quoteArg(arg)}): ${why}.`);
}

/**
 * Turns an errno error met after resolution into a ConfinedFileError a person can act on: a name that
 * vanished or changed kind mid-operation is a race ("changed"), permissions are "denied", the rest "io".
 */
function asConfinedError(error: unknown, argName: string, arg: string): Error {
  if (error instanceof ConfinedFileError || error instanceof PathEscapeError) return error;
  const code = errnoCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'EINVAL' || code === 'EISDIR') {
    return refuseFile(
      argName,
      arg,
      'changed',
      'the path changed during the operation; nothing was written outside the workspace',
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return refuseFile(argName, arg, 'denied', `permission denied (${code})`);
  }
  const detail = error instanceof Error ? error.message : String(error);
  return refuseFile(argName, arg, 'io', `the file system refused the operation: ${detail}`);
}

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

interface RealRoot {
  real: string;
  stat: fs.Stats;
}

function realRoot(root: string): RealRoot {
  let real: string;
  try {
    real = fs.realpathSync.native(root);
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
function walkComponents(start: string, components: string[], argName: string, arg: string): string {
  let current = start;
  const pending = [...components];
  let links = 0;
  let retries = 0;
  while (pending.length > 0) {
    const component = pending.shift() as string;
    if (component === '..') {
      current = path.dirname(current);
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
      if (path.isAbsolute(target)) current = path.parse(target).root;
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
      return path.join(fs.realpathSync.native(probe), ...tail);
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
function isWithinRoot(root: RealRoot, candidate: string): boolean {
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

function resolveWithRoot(root: RealRoot, arg: string, options: ResolveOptions): string {
  const { argName } = options;
  checkArgSyntax(arg, argName);
  const start = path.isAbsolute(arg) ? path.parse(arg).root : root.real;
  let resolved: string;
  try {
    resolved = canonicalize(walkComponents(start, splitComponents(arg), argName, arg));
  } catch (error) {
    if (error instanceof PathEscapeError) throw error;
    if (errnoCode(error) === 'ELOOP')
      throw refuse(argName, arg, 'symlink_loop', 'too many symbolic links (a link loop?)');
    throw error;
  }
  if (!isWithinRoot(root, resolved)) {
    throw refuse(
      argName,
      arg,
      'escape',
      `path escapes the workspace (it resolves to ${JSON.stringify(resolved)})`,
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

function describeKind(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a folder';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function procChild(fd: number, name: string): string {
  return `/proc/self/fd/${fd}/${name}`;
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return undefined;
    throw error;
  }
}

function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing left to release.
  }
}

/** A directory opened by walking down from the root without following any link, proven to be `dirPath`. */
interface PinnedDir {
  fd: number;
  dirPath: string;
}

interface Target {
  argName: string;
  arg: string;
  root: RealRoot;
  realPath: string;
  dirPath: string;
  name: string;
  dirComponents: string[];
}

function prepareTarget(root: string, arg: string, argName: string, forWrite: boolean): Target {
  const realRootInfo = realRoot(root);
  const realPath = resolveWithRoot(realRootInfo, arg, { argName, forWrite });
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

function verifyFdPath(fd: number, expected: string, target: Target): void {
  let actual: string;
  try {
    actual = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    throw refuseFile(target.argName, target.arg, 'changed', 'the file could not be verified after opening');
  }
  if (actual !== expected) {
    throw refuseFile(
      target.argName,
      target.arg,
      'changed',
      'the path changed while it was being opened (a folder was moved or replaced); nothing was written outside the workspace',
    );
  }
}

/** Opens each directory from the root down with O_NOFOLLOW, so a link swapped in at any level is refused. */
function pinDirectory(target: Target, create: boolean): PinnedDir {
  const { root, argName, arg } = target;
  let fd = fs.openSync(root.real, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    const rootStat = fs.fstatSync(fd);
    if (rootStat.dev !== root.stat.dev || rootStat.ino !== root.stat.ino) {
      throw refuseFile(argName, arg, 'changed', 'the workspace folder changed while it was being opened');
    }
    let dirPath = root.real;
    for (const component of target.dirComponents) {
      const childPath = procChild(fd, component);
      let childFd: number;
      try {
        childFd = fs.openSync(childPath, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT' && create) {
          try {
            fs.mkdirSync(childPath);
          } catch (mkdirError) {
            if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
          }
          childFd = openChildDirAfterCreate(childPath, target);
        } else if (code === 'ENOENT') {
          throw refuseFile(
            argName,
            arg,
            'not_found',
            `folder ${JSON.stringify(path.join(dirPath, component))} does not exist`,
          );
        } else if (code === 'ELOOP' || code === 'ENOTDIR') {
          const stat = lstatOrUndefined(childPath);
          if (stat === undefined || stat.isSymbolicLink() || stat.isDirectory()) {
            throw refuseFile(
              argName,
              arg,
              'changed',
              'a folder on the path was replaced by a symbolic link during the operation',
            );
          }
          throw refuseFile(
            argName,
            arg,
            'not_directory',
            `${JSON.stringify(path.join(dirPath, component))} is not a folder`,
          );
        } else {
          throw error;
        }
      }
      closeQuietly(fd);
      fd = childFd;
      dirPath = path.join(dirPath, component);
    }
    verifyFdPath(fd, dirPath, target);
    return { fd, dirPath };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

function openChildDirAfterCreate(childPath: string, target: Target): number {
  try {
    return fs.openSync(childPath, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'a folder being created was replaced during the operation',
      );
    }
    throw error;
  }
}

function checkExistingForWrite(stat: fs.Stats, target: Target, exclusive: boolean): void {
  const { argName, arg } = target;
  if (stat.isSymbolicLink()) {
    throw refuseFile(
      argName,
      arg,
      'changed',
      'the file was replaced by a symbolic link during the operation',
    );
  }
  if (stat.isDirectory()) throw refuseFile(argName, arg, 'is_directory', 'this is a folder, not a file');
  if (!stat.isFile())
    throw refuseFile(argName, arg, 'not_regular', `this is ${describeKind(stat)}, not a regular file`);
  if (stat.nlink > 1) {
    throw refuseFile(
      argName,
      arg,
      'hard_linked',
      `the file has ${stat.nlink} hard links; writing it would change the other copies too`,
    );
  }
  if (exclusive) throw refuseFile(argName, arg, 'exists', 'the file already exists');
}

function checkOpenedForRead(stat: fs.Stats, target: Target): void {
  if (stat.isDirectory())
    throw refuseFile(target.argName, target.arg, 'is_directory', 'this is a folder, not a file');
  if (!stat.isFile()) {
    throw refuseFile(
      target.argName,
      target.arg,
      'not_regular',
      `this is ${describeKind(stat)}, not a regular file`,
    );
  }
}

/** Options of readFileConfined. */
export interface ReadConfinedOptions {
  argName: string;
  /** Upper bound on bytes read; larger files are refused, or cut when `truncate` is set. */
  maxBytes: number;
  /** Return the first maxBytes of a larger file instead of refusing it. */
  truncate?: boolean;
  pinning?: Pinning;
}

/** The bytes of a confined read. `size` is the file's size when opened. */
export interface ConfinedRead {
  path: string;
  data: Buffer;
  size: number;
  truncated: boolean;
}

interface OpenedForRead {
  fd: number;
  size: number;
  realPath: string;
  target: Target;
}

function openForRead(root: string, arg: string, options: ReadConfinedOptions): OpenedForRead {
  const target = prepareTarget(root, arg, options.argName, false);
  const pinning = options.pinning ?? DEFAULT_PINNING;
  const flags = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  let dir: PinnedDir | undefined;
  let fd: number | undefined;
  try {
    let filePath = target.realPath;
    if (pinning === 'procfd') {
      dir = pinDirectory(target, false);
      filePath = procChild(dir.fd, target.name);
    }
    // lstat before open: opening some device files has side effects, and a FIFO would block.
    const before = lstatOrUndefined(filePath);
    if (before === undefined) throw refuseFile(target.argName, arg, 'not_found', 'the file does not exist');
    if (before.isSymbolicLink()) {
      throw refuseFile(
        target.argName,
        arg,
        'changed',
        'the file was replaced by a symbolic link during the operation',
      );
    }
    checkOpenedForRead(before, target);
    fd = openRefusingLinks(filePath, flags, target);
    const stat = fs.fstatSync(fd);
    checkOpenedForRead(stat, target);
    if (stat.ino !== before.ino || stat.dev !== before.dev) {
      throw refuseFile(target.argName, arg, 'changed', 'the file was replaced while it was being opened');
    }
    if (pinning === 'procfd') verifyFdPath(fd, target.realPath, target);
    else verifyPortable(target.realPath, stat, target);
    if (stat.size > options.maxBytes && !options.truncate) {
      throw refuseFile(
        target.argName,
        arg,
        'too_large',
        `the file is ${stat.size} bytes, over the ${options.maxBytes}-byte limit; read a range instead`,
      );
    }
    return { fd, size: stat.size, realPath: target.realPath, target };
  } catch (error) {
    closeQuietly(fd);
    throw asConfinedError(error, target.argName, arg);
  } finally {
    closeQuietly(dir?.fd);
  }
}

function openRefusingLinks(filePath: string, flags: number, target: Target, mode?: number): number {
  try {
    return fs.openSync(filePath, flags, mode);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ELOOP') {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced by a symbolic link during the operation',
      );
    }
    if (code === 'ENXIO') {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_regular',
        'this is a named pipe or socket, not a regular file',
      );
    }
    if (code === 'EEXIST') throw refuseFile(target.argName, target.arg, 'exists', 'the file already exists');
    if (code === 'ENOENT')
      throw refuseFile(target.argName, target.arg, 'not_found', 'the file does not exist');
    throw error;
  }
}

/** Portable proof: the real path is still inside and names the very inode that was opened. */
function verifyPortable(expectedPath: string, opened: fs.Stats, target: Target): void {
  let real: string;
  let current: fs.Stats;
  try {
    real = fs.realpathSync.native(expectedPath);
    current = fs.statSync(real);
  } catch {
    throw refuseFile(target.argName, target.arg, 'changed', 'the file changed while it was being opened');
  }
  if (
    real !== expectedPath ||
    !isWithinRoot(target.root, real) ||
    current.ino !== opened.ino ||
    current.dev !== opened.dev
  ) {
    throw refuseFile(target.argName, target.arg, 'changed', 'the file changed while it was being opened');
  }
}

function readBounded(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = Math.min(64 * 1024, limit + 1 - total);
    if (want <= 0) break;
    const buffer = Buffer.allocUnsafe(want);
    const n = fs.readSync(fd, buffer, 0, want, null);
    if (n === 0) break;
    chunks.push(buffer.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

function readBoundedAsync(fd: number, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const step = (): void => {
      const want = Math.min(64 * 1024, limit + 1 - total);
      if (want <= 0) {
        resolve(Buffer.concat(chunks, total));
        return;
      }
      const buffer = Buffer.allocUnsafe(want);
      fs.read(fd, buffer, 0, want, null, (error, n) => {
        if (error) {
          reject(error);
          return;
        }
        if (n === 0) {
          resolve(Buffer.concat(chunks, total));
          return;
        }
        chunks.push(buffer.subarray(0, n));
        total += n;
        step();
      });
    };
    step();
  });
}

function finishRead(opened: OpenedForRead, data: Buffer, options: ReadConfinedOptions): ConfinedRead {
  // The size at open time can lie (a file growing while read); the bytes actually read decide.
  if (data.length > options.maxBytes) {
    if (!options.truncate) {
      throw refuseFile(
        opened.target.argName,
        opened.target.arg,
        'too_large',
        `the file grew past the ${options.maxBytes}-byte limit while it was read; read a range instead`,
      );
    }
    return {
      path: opened.realPath,
      data: data.subarray(0, options.maxBytes),
      size: opened.size,
      truncated: true,
    };
  }
  return { path: opened.realPath, data, size: opened.size, truncated: false };
}

/**
 * Reads a regular file inside the workspace: refuses escapes, links swapped in during the call, FIFOs,
 * devices and sockets (without blocking), and files over maxBytes (or cuts them when `truncate` is set).
 */
export async function readFileConfined(
  root: string,
  arg: string,
  options: ReadConfinedOptions,
): Promise<ConfinedRead> {
  const opened = openForRead(root, arg, options);
  try {
    return finishRead(opened, await readBoundedAsync(opened.fd, options.maxBytes), options);
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    closeQuietly(opened.fd);
  }
}

/** Synchronous readFileConfined, for small files read during setup (e.g. .env files for redaction). */
export function readFileConfinedSync(root: string, arg: string, options: ReadConfinedOptions): ConfinedRead {
  const opened = openForRead(root, arg, options);
  try {
    return finishRead(opened, readBounded(opened.fd, options.maxBytes), options);
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    closeQuietly(opened.fd);
  }
}

/** Options of writeFileConfined. */
export interface WriteConfinedOptions {
  argName: string;
  /**
   * Write a temp file in the same folder and rename it over the target (default true). Only with procfd
   * pinning: the portable strategy always writes in place (see writeFileConfined).
   */
  atomic?: boolean;
  /** Create missing parent folders, each one without following links (default true). */
  createParents?: boolean;
  /** Fail with code `exists` when the file already exists. */
  exclusive?: boolean;
  /** fsync the data before it replaces the target (default true). */
  fsync?: boolean;
  /** Permission bits of a new file (default 0o666, minus the umask). */
  mode?: number;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  /** User-listed protected globs, relative to the workspace root. */
  protectedGlobs?: readonly string[];
  /** The real path an approval was granted for; the write is refused if the argument now lands elsewhere. */
  expectedRealPath?: string;
  pinning?: Pinning;
}

/** What a confined write did. */
export interface ConfinedWrite {
  path: string;
  bytes: number;
  created: boolean;
}

function tempNameFor(name: string): string {
  const suffix = randomBytes(6).toString('hex');
  return Buffer.byteLength(name) <= 200 ? `.${name}.${suffix}.keel-tmp` : `.${suffix}.keel-tmp`;
}

function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      if (offset >= data.length) {
        resolve();
        return;
      }
      fs.write(fd, data, offset, data.length - offset, offset, (error, written) => {
        if (error) reject(error);
        else step(offset + written);
      });
    };
    step(0);
  });
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

function copyOwnership(fd: number, existing: fs.Stats): void {
  fs.fchmodSync(fd, existing.mode & 0o1777);
  if (process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0)) {
    try {
      fs.fchownSync(fd, existing.uid, existing.gid);
    } catch {
      // Ownership is a courtesy; the content is what was asked for.
    }
  }
}

/** Creates missing parents one at a time by path (portable mode), then proves the parent is inside. */
function createParentsPortable(target: Target): void {
  let current = target.root.real;
  for (const component of target.dirComponents) {
    current = path.join(current, component);
    const stat = lstatOrUndefined(current);
    if (stat === undefined) {
      try {
        fs.mkdirSync(current);
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
      }
    } else if (stat.isSymbolicLink()) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'a folder on the path was replaced by a symbolic link during the operation',
      );
    } else if (!stat.isDirectory()) {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_directory',
        `${JSON.stringify(current)} is not a folder`,
      );
    }
  }
  let real: string;
  try {
    real = fs.realpathSync.native(target.dirPath);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') {
      throw refuseFile(
        target.argName,
        target.arg,
        'not_found',
        `folder ${JSON.stringify(target.dirPath)} does not exist`,
      );
    }
    throw error;
  }
  if (real !== target.dirPath) {
    throw refuseFile(
      target.argName,
      target.arg,
      'changed',
      'a folder on the path changed during the operation',
    );
  }
}

/**
 * Writes a file inside the workspace without ever writing outside it: the final component is opened
 * with O_NOFOLLOW (new files with O_EXCL), the opened file is proven to be the confined one before any
 * byte is written, hard-linked and special files are refused, protected paths need `allowProtected`.
 */
export async function writeFileConfined(
  root: string,
  arg: string,
  data: string | Uint8Array,
  options: WriteConfinedOptions,
): Promise<ConfinedWrite> {
  const target = prepareTarget(root, arg, options.argName, true);
  if (options.expectedRealPath !== undefined && options.expectedRealPath !== target.realPath) {
    throw refuseFile(
      options.argName,
      arg,
      'changed',
      'the path now resolves somewhere other than the approved path',
    );
  }
  if (!options.allowProtected) {
    const reason = protectionReason(target.root.real, target.realPath, options.protectedGlobs ?? []);
    if (reason !== null)
      throw refuseFile(options.argName, arg, 'protected', `${reason}; writing it needs an approval`);
  }
  const bytes =
    typeof data === 'string'
      ? Buffer.from(data, 'utf8')
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const pinning = options.pinning ?? DEFAULT_PINNING;
  const createParents = options.createParents ?? true;
  let dir: PinnedDir | undefined;
  try {
    if (pinning === 'procfd') dir = pinDirectory(target, createParents);
    else if (createParents) createParentsPortable(target);
    const childPath = (name: string): string =>
      dir ? procChild(dir.fd, name) : path.join(target.dirPath, name);
    const existing = lstatOrUndefined(childPath(target.name));
    if (existing !== undefined) checkExistingForWrite(existing, target, options.exclusive ?? false);
    // Portable pinning writes in place even when asked to be atomic: rename(2) looks up its source and its
    // destination separately, so a parent folder swapped for a link between the two lookups would move the
    // verified temp file out of the workspace (caught by the race test). In place, every byte goes through
    // the one descriptor that was verified. Confinement wins over atomicity where openat/renameat are missing.
    const write = options.atomic === false || pinning === 'portable' ? writeInPlace : writeViaTemp;
    await write({ target, dir, childPath, existing, bytes, options });
    return { path: target.realPath, bytes: bytes.length, created: existing === undefined };
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    closeQuietly(dir?.fd);
  }
}

interface WriteContext {
  target: Target;
  dir: PinnedDir | undefined;
  childPath: (name: string) => string;
  existing: fs.Stats | undefined;
  bytes: Buffer;
  options: WriteConfinedOptions;
}

function verifyOpenedFile(fd: number, expectedPath: string, context: WriteContext): fs.Stats {
  const stat = fs.fstatSync(fd);
  const { target } = context;
  if (!stat.isFile())
    throw refuseFile(
      target.argName,
      target.arg,
      'not_regular',
      `this is ${describeKind(stat)}, not a regular file`,
    );
  if (stat.nlink > 1) {
    throw refuseFile(
      target.argName,
      target.arg,
      'hard_linked',
      `the file has ${stat.nlink} hard links; writing it would change the other copies too`,
    );
  }
  if (context.dir) verifyFdPath(fd, expectedPath, target);
  else verifyPortable(expectedPath, stat, target);
  return stat;
}

async function writeViaTemp(context: WriteContext): Promise<void> {
  const { target, childPath, existing, bytes, options } = context;
  const tempName = tempNameFor(target.name);
  const tempPath = childPath(tempName);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NOCTTY;
  const fd = openRefusingLinks(tempPath, flags, target, options.mode ?? 0o666);
  let renamed = false;
  try {
    const tempStat = verifyOpenedFile(fd, path.join(target.dirPath, tempName), context);
    if (existing) copyOwnership(fd, existing);
    await writeAll(fd, bytes);
    if (options.fsync ?? true) await fsyncAsync(fd);
    if (context.dir) verifyFdPath(context.dir.fd, target.dirPath, target);
    if (options.exclusive) {
      // link() fails if the name exists: an exclusive create that is still atomic for readers.
      try {
        fs.linkSync(tempPath, childPath(target.name));
      } catch (error) {
        if (errnoCode(error) === 'EEXIST')
          throw refuseFile(target.argName, target.arg, 'exists', 'the file already exists');
        throw error;
      }
    } else {
      // rename() replaces the directory entry itself: a link swapped in at the name is replaced, never followed.
      fs.renameSync(tempPath, childPath(target.name));
      renamed = true;
    }
    const final = fs.lstatSync(childPath(target.name));
    if (final.ino !== tempStat.ino || final.dev !== tempStat.dev) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced right after it was written',
      );
    }
    if (context.dir) verifyFdPath(context.dir.fd, target.dirPath, target);
    else verifyPortable(target.realPath, final, target);
  } finally {
    closeQuietly(fd);
    if (!renamed) {
      try {
        fs.unlinkSync(tempPath);
      } catch {
        // Already gone (renamed or never created).
      }
    }
  }
}

async function writeInPlace(context: WriteContext): Promise<void> {
  const { target, childPath, existing, bytes, options } = context;
  const create = existing === undefined ? constants.O_CREAT | constants.O_EXCL : 0;
  const flags = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | create;
  let fd: number;
  try {
    fd = openRefusingLinks(childPath(target.name), flags, target, options.mode ?? 0o666);
  } catch (error) {
    // A file that appeared since the check is a race, unless the caller asked for an exclusive create.
    if (error instanceof ConfinedFileError && error.code === 'exists' && !options.exclusive) {
      throw refuseFile(target.argName, target.arg, 'changed', 'the file appeared while it was being created');
    }
    throw error;
  }
  try {
    const stat = verifyOpenedFile(fd, target.realPath, context);
    if (existing && (stat.ino !== existing.ino || stat.dev !== existing.dev)) {
      throw refuseFile(
        target.argName,
        target.arg,
        'changed',
        'the file was replaced while it was being opened',
      );
    }
    fs.ftruncateSync(fd, 0);
    await writeAll(fd, bytes);
    if (options.fsync ?? true) await fsyncAsync(fd);
  } finally {
    closeQuietly(fd);
  }
}
