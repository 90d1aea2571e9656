import { z } from 'zod';
import { PersistentConfig, readPersistentConfig } from '../persistent/config.js';

/*
 * What an export carries beside the events: the files of the session folder the projection reads. Today that
 * is `persistent.json` (the session's Persistent Dirs: the system prompt describes the checkout from it), as
 * an optional first line `{"sessionConfig":{"persistent":{...}}}`. A session without one exports only events,
 * as before, so such files keep their bytes.
 */

/** The optional first line of an export, validated on import like every event line. */
export const SessionConfigLine = z.strictObject({
  sessionConfig: z.strictObject({ persistent: PersistentConfig }),
});
export type SessionConfig = z.infer<typeof SessionConfigLine>['sessionConfig'];

/** True for a parsed line that is meant as the config line (validated separately). */
export function isConfigLine(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'sessionConfig' in value;
}

/** The config line of the session in `dir` (no newline), or undefined when it has nothing to carry. */
export function configLineOf(dir: string): string | undefined {
  const persistent = readPersistentConfig(dir);
  if (persistent === undefined) return undefined;
  return JSON.stringify({ sessionConfig: { persistent: PersistentConfig.parse(persistent) } });
}

/**
 * The Persistent Dir configuration an imported session gets: the file's `project` dir on the folder the
 * import names (`project`; without it the session is read, not run, and the file's path is kept as a
 * record), with its commit model and read-only flag. Other dirs are dropped: their folders come from the
 * file, and a checkout of a folder no one here chose would read it into the session and commit into it.
 */
export function importedPersistent(
  config: SessionConfig,
  project: string | undefined,
): { persistent: PersistentConfig | undefined; dropped: string[] } {
  const source = config.persistent;
  const kept = source.dirs
    .filter((dir) => dir.name === 'project')
    .map((dir) => (project === undefined ? dir : { ...dir, path: project }));
  const dropped = source.dirs.filter((dir) => dir.name !== 'project').map((dir) => dir.name);
  if (kept.length === 0) return { persistent: undefined, dropped };
  const names = new Set(kept.map((dir) => dir.name));
  return {
    persistent: { version: 1, dirs: kept, readOnly: source.readOnly.filter((name) => names.has(name)) },
    dropped,
  };
}
