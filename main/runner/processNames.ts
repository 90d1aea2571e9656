import os from 'node:os';

/** The name of a signal number (`SIGKILL`), or `signal N` for one the platform does not name. */
export function signalNameOf(signal: number): string {
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? `signal ${signal}`;
}
