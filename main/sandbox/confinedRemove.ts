// Confined removal: deletes one regular file inside the workspace, never anything outside it, through the
// same pinned folder as the confined writer. apply_patch's Delete File and Move to (and their rollback)
// remove files through here. See README.md.
import fs from 'node:fs';
import { describeKind, lstatOrUndefined } from './confinedOpen.js';
import { asConfinedError, refuseFile } from './pathErrors.js';
import { DEFAULT_PINNING, pinFolder, type Pinning } from './pinning.js';
import { type PinnedFolder } from './pinnedFolder.js';
import { refuseUnapprovedChange } from './protectedPaths.js';
import { prepareTarget } from './resolvePath.js';

/** Options of removeFileConfined. */
export interface RemoveConfinedOptions {
  argName: string;
  /** The caller holds an approval for a protected path (.git, .keel, .vscode, user globs). */
  allowProtected?: boolean;
  /** User-listed protected globs, relative to the workspace root. */
  protectedGlobs?: readonly string[];
  /** The real path that was checked (and shown in a diff); the removal is refused if the argument now lands elsewhere. */
  expectedRealPath?: string;
  /** Folders inside the root no argument may reach (the Keel home): refused like an escape (ResolveOptions.hidden). */
  hidden?: readonly string[];
  pinning?: Pinning;
}

/**
 * Removes the regular file `arg` names inside `root`: resolved like a write (a link on the way is followed
 * only while it stays inside), protected paths need `allowProtected`, and the name is unlinked in the pinned
 * folder, so a folder swapped for a link meanwhile is refused instead of followed. Folders, links swapped in
 * at the name and special files are refused. Throws PathEscapeError / ConfinedFileError.
 */
export function removeFileConfined(root: string, arg: string, options: RemoveConfinedOptions): void {
  const target = prepareTarget(root, arg, options.argName, true, options.hidden);
  refuseUnapprovedChange(target, options, 'removing');
  let folder: PinnedFolder | undefined;
  try {
    folder = pinFolder(target, options.pinning ?? DEFAULT_PINNING, false);
    const child = folder.childPath(target.name);
    const existing = lstatOrUndefined(child);
    if (existing === undefined)
      throw refuseFile(options.argName, arg, 'not_found', 'the file does not exist');
    if (existing.isSymbolicLink())
      throw refuseFile(options.argName, arg, 'changed', 'the file was replaced by a symbolic link');
    if (existing.isDirectory())
      throw refuseFile(options.argName, arg, 'is_directory', 'this is a folder, not a file');
    if (!existing.isFile())
      throw refuseFile(
        options.argName,
        arg,
        'not_regular',
        `this is ${describeKind(existing)}, not a regular file`,
      );
    fs.unlinkSync(child);
    folder.verifyFolder();
  } catch (error) {
    throw asConfinedError(error, options.argName, arg);
  } finally {
    folder?.release();
  }
}
