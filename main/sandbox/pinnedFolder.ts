// The folder a confined read or write holds while it runs: the interface both pinning strategies implement.
import type fs from 'node:fs';

/** The folder of a target, held by one strategy for the length of one confined operation. */
export interface PinnedFolder {
  /** The path through which a name in the folder is opened, created, linked or renamed. */
  childPath(name: string): string;
  /** Proves that `fd` (whose fstat is `opened`) is the file at `expectedPath`; throws `changed` otherwise. */
  verifyOpened(fd: number, opened: fs.Stats, expectedPath: string): void;
  /** Proves the folder is still at its real path; throws `changed` otherwise. */
  verifyFolder(): void;
  /** Releases what the pin holds (procfd: the folder's descriptor). */
  release(): void;
}
