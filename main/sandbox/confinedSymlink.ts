// Confined symbolic links: a link made or replaced at a name inside the workspace, in the folder the
// pinning strategy holds, never following a link already at that name. See README.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { lstatOrUndefined } from './confinedOpen.js';
import { asConfinedError, refuseFile } from './pathErrors.js';
import { DEFAULT_PINNING, pinFolder, type Pinning } from './pinning.js';
import { type PinnedFolder } from './pinnedFolder.js';
import { refuseUnapprovedChange } from './protectedPaths.js';
import { prepareTargetAtName } from './resolvePath.js';

/** Options of writeSymlinkConfined. */
export interface SymlinkConfinedOptions {
  argName: string;
  /** Create missing parent folders, each one without following links (default true). */
  createParents?: boolean;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  pinning?: Pinning;
}

/**
 * Makes `arg` a symbolic link whose text is `text` (stored as is, never followed), replacing a file or
 * link at that name (the link itself, not what it points to); returns the link's real path. The link is
 * made at a temp name in the pinned folder and renamed over the name: with procfd both names are looked
 * up in the pinned descriptor; portable renames by path (its known gap, README.md). A folder at the name
 * is refused, and so are protected paths without `allowProtected`.
 */
export function writeSymlinkConfined(
  root: string,
  arg: string,
  text: string,
  options: SymlinkConfinedOptions,
): string {
  const target = prepareTargetAtName(root, arg, options.argName);
  refuseUnapprovedChange(target, options, 'writing');
  let folder: PinnedFolder | undefined;
  let temp: string | undefined;
  try {
    folder = pinFolder(target, options.pinning ?? DEFAULT_PINNING, options.createParents ?? true);
    const at = folder.childPath(target.name);
    if (lstatOrUndefined(at)?.isDirectory()) {
      throw refuseFile(options.argName, arg, 'is_directory', 'this is a folder, not a file');
    }
    temp = folder.childPath(`.${randomBytes(6).toString('hex')}.keel-tmp`);
    fs.symlinkSync(text, temp);
    const made = fs.lstatSync(temp);
    folder.verifyFolder();
    fs.renameSync(temp, at);
    temp = undefined;
    const final = fs.lstatSync(at);
    if (final.ino !== made.ino || final.dev !== made.dev) {
      throw refuseFile(options.argName, arg, 'changed', 'the link was replaced right after it was made');
    }
    folder.verifyFolder();
    return target.realPath;
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    if (temp !== undefined) fs.rmSync(temp, { force: true });
    folder?.release();
  }
}
