/** A new session row's bound values (sessionIndex.ts). */
export function toSessionValues(row: NewSessionRow) {
  return {
    id: row.id,
    title: row.title ?? null,
    projectFolder: row.projectFolder,
    provider: row.provider,
    model: row.model,
    parentId: row.parentId ?? null,
    createdAt: toIndexTime(row.createdAt),
  };
}

/** Normalises an event time to ISO-8601 UTC so the list's text ordering is time ordering. */
export function toIndexTime(at: string): string {
  const ms = Date.parse(at);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : at;
}

/** A new index row, as the session log registers it. */
export type NewSessionRow = {
  id: string;
  title?: string;
  projectFolder: string;
  provider: string;
  model: string;
  parentId?: string;
  createdAt: string;
};
