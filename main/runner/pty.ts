import type * as NodePty from 'node-pty';

let loaded: Promise<typeof NodePty> | undefined;

/**
 * node-pty (a native addon), loaded by the first run that spawns a pty rather than by every process that
 * imports the runner: most `keel` commands and hosts never run a command. Loaded once per process.
 */
export function loadPty(): Promise<typeof NodePty> {
  loaded ??= import('node-pty');
  return loaded;
}
