// Path confinement's entry: every path argument of every tool goes through resolveInWorkspace, and every
// file read or write of the harness through the confined read and write below. Code outside main/sandbox
// imports them from here; which file does what is in README.md.
export {
  ConfinedFileError,
  OUTSIDE_ROOT,
  PathEscapeError,
  type FileRefusal,
  type PathRefusal,
} from './pathErrors.js';
export {
  hiddenFoldersUnder,
  isInHiddenFolder,
  isInsideWorkspace,
  resolveInWorkspace,
  type ResolveOptions,
} from './resolvePath.js';
export type { Pinning } from './pinning.js';
export {
  readFileConfined,
  readFileConfinedSync,
  type ConfinedRead,
  type ReadConfinedOptions,
} from './confinedRead.js';
export {
  streamToFileConfined,
  writeFileConfined,
  type ConfinedChunks,
  type ConfinedData,
  type ConfinedStreamWrite,
  type ConfinedWrite,
  type StreamConfinedOptions,
  type WriteConfinedOptions,
} from './confinedWrite.js';
export { writeSymlinkConfined, type SymlinkConfinedOptions } from './confinedSymlink.js';
export { removeFileConfined, type RemoveConfinedOptions } from './confinedRemove.js';
