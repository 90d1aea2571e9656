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
  | {
      type: 'session';
      key: string;
      session: SessionSummary;
      /** Set under the session it came from (a fork, or a subagent's run), listed right below it. */
      parent?: { id: string; title: string | undefined };
    };

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
    // A session whose parent is listed in the same folder goes right under it (its own children under it in
    // turn), marked; the others keep their place, newest first.
    const listed = new Map(members.map((session) => [session.id, session]));
    const children = new Map<string, SessionSummary[]>();
    for (const session of members) {
      if (session.parentId === undefined || !listed.has(session.parentId) || session.parentId === session.id)
        continue;
      const siblings = children.get(session.parentId);
      if (siblings) siblings.push(session);
      else children.set(session.parentId, [session]);
    }
    const placed = new Set<string>();
    const place = (session: SessionSummary, parent: SessionSummary | undefined) => {
      if (placed.has(session.id)) return;
      placed.add(session.id);
      rows.push({
        type: 'session',
        key: `session:${session.id}`,
        session,
        ...(parent ? { parent: { id: parent.id, title: parent.title } } : {}),
      });
      for (const child of children.get(session.id) ?? []) place(child, session);
    };
    for (const session of members) {
      const nested =
        session.parentId !== undefined && listed.has(session.parentId) && session.parentId !== session.id;
      if (!nested) place(session, undefined);
    }
    // A cycle of parents (never written by Keel) would leave rows out: they are listed as they come.
    for (const session of members) place(session, undefined);
  }
  return rows;
}
