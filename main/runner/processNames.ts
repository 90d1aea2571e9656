import { realpathSync } from 'node:fs';
import os from 'node:os';

/** The name of a signal number (`SIGKILL`), or `signal N` for one the platform does not name. */
export function signalNameOf(signal: number): string {
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? `signal ${signal}`;
}

/** The real path of a folder a run needs, or the caller's error saying it does not exist. */
export function realPathOf(target: string, what: string, fail: (message: string) => Error): string {
  try {
    return realpathSync(target);
  } catch {
    throw fail(`The ${what} ${target} does not exist.`);
  }
}
