import { mapClaudeSession } from './claudeCode.js';
import { mapCodexRollout } from './codex.js';
import type { FileDigest, LineProblem } from './jsonl.js';
import type { SourceFile } from './locations.js';
import type { ImportTool, MappedSession } from './mapped.js';

/*
 * One source file read and mapped, with what reading it told (its lines' problems, its digest): the unit of work
 * the importer hands to its mapping thread (sourceMapper.ts), or does itself. Reads only the source.
 */

export type MapResult = {
  mapped: MappedSession | undefined;
  digest: FileDigest | undefined;
  problems: LineProblem[];
};

/** Reads and maps one source of `tool` (its subagents' files too). */
export async function mapSource(tool: ImportTool, source: SourceFile): Promise<MapResult> {
  const problems: LineProblem[] = [];
  let digest: FileDigest | undefined;
  const problem = (p: LineProblem): void => void problems.push(p);
  const setDigest = (d: FileDigest): void => void (digest = d);
  const mapped =
    tool === 'codex'
      ? await mapCodexRollout(source.file, problem, setDigest, (thread) => keelId('codex', thread))
      : await mapClaudeSession(source, (id, key) => childId(keelId(tool, id), key), problem, setDigest);
  return { mapped, digest, problems };
}

/** The Keel id of a source session: the tool and its own id, in the characters a session id may hold. */
export function keelId(tool: ImportTool, sourceId: string): string {
  const safe = sourceId.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${tool === 'codex' ? 'codex' : 'cc'}-${safe}`.slice(0, 100);
}

/** The Keel id of a subagent of session `parent` (its key: `agent-<id>` or `side-<uuid>`). */
export function childId(parent: string, key: string): string {
  return `${parent}-${key.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 128);
}
