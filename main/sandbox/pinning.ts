// How the folder of a confined read or write is held while it runs, so a link swapped in at any level is
// never followed: the interface both strategies implement, and the choice between them. See README.md.
import fs from 'node:fs';
import { pinProcfd } from './pinProcfd.js';
import { pinPortable } from './pinPortable.js';
import type { PinnedFolder } from './pinnedFolder.js';
import type { Target } from './resolvePath.js';

/** How an opened file is proven to be the confined one (tests select; production uses the default). */
export type Pinning = 'procfd' | 'portable';

const PROC_FD_AVAILABLE = process.platform === 'linux' && fs.existsSync('/proc/self/fd');

/** The strategy used when a caller names none: `procfd` where /proc/self/fd exists (Linux), else `portable`. */
export const DEFAULT_PINNING: Pinning = PROC_FD_AVAILABLE ? 'procfd' : 'portable';

/**
 * Holds the folder of `target` with `pinning`, creating missing folders (never through a link) when
 * `create`; throws ConfinedFileError when a folder on the way is missing, not a folder, or was swapped.
 */
export function pinFolder(target: Target, pinning: Pinning, create: boolean): PinnedFolder {
  return pinning === 'procfd' ? pinProcfd(target, create) : pinPortable(target, create);
}
