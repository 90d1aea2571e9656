import type { SessionSummary } from '../../../../main/ipc/contract.js';

/** One row of the session browser: a project folder heading or a session under it. */
export type ListRow =
  | {
      type: 'project';
      key: string;
      folder: string;
      exists: boolean;
      /** Loaded sessions of this folder (more may follow on later pages). */
      count: number;
      collapsed: boolean;
    }
  | { type: 'session'; key: string; session: SessionSummary };

/**
 * Groups sessions (already newest first) by project folder: folders in order of their newest
 * session, sessions newest first under each; a collapsed folder keeps its heading only.
 */
export function buildListRows(
  sessions: readonly SessionSummary[],
  collapsed: ReadonlySet<string>,
): ListRow[] {
  const groups = new Map<string, SessionSummary[]>();
  for (const session of sessions) {
    const group = groups.get(session.projectFolder);
    if (group) group.push(session);
    else groups.set(session.projectFolder, [session]);
  }
  const rows: ListRow[] = [];
  for (const [folder, members] of groups) {
    const isCollapsed = collapsed.has(folder);
    rows.push({
      type: 'project',
      key: `project:${folder}`,
      folder,
      exists: members.every((session) => session.projectExists),
      count: members.length,
      collapsed: isCollapsed,
    });
    if (isCollapsed) continue;
    for (const session of members) rows.push({ type: 'session', key: `session:${session.id}`, session });
  }
  return rows;
}
