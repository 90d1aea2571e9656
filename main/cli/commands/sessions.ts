import type { Command } from 'commander';
import { openSessionIndex, type SessionSummary, withIndexBehind } from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { clip } from '../../common/text.js';
import { clipLeft, formatTable } from '../format.js';

type SessionsOptions = { json?: boolean; search?: string; limit: number };

/** `keel sessions [--json] [--search TEXT] [--limit N]`: the session list, children under their parents. */
export function registerSessions(program: Command, context: CliContext): void {
  program
    .command('sessions')
    .description('list sessions, most recently updated first (children indented under their parent)')
    .option('--json', 'print the list as JSON')
    .option('--search <text>', 'only sessions whose messages contain all these words')
    .option('--limit <n>', 'list at most this many (up to 1000)', parsePositiveInteger, 50)
    .action((options: SessionsOptions) => {
      const index = openSessionIndex(context.home());
      let sessions: (SessionSummary & { indexBehind?: number })[];
      try {
        // indexBehind: events a running turn appended that the counts and the search do not cover yet.
        sessions = withIndexBehind(
          context.home(),
          index,
          index.list({
            limit: options.limit,
            ...(options.search === undefined ? {} : { search: options.search }),
          }),
        );
      } finally {
        index.close();
      }
      if (options.json) {
        context.io.stdout(`${JSON.stringify(sessions, null, 2)}\n`);
        return;
      }
      if (sessions.length === 0) {
        context.io.stdout(
          options.search === undefined
            ? 'no sessions yet (keel import FILE adds one)\n'
            : `no session mentions ${JSON.stringify(options.search)}\n`,
        );
        return;
      }
      context.io.stdout(`${formatSessionTable(sessions, options.search !== undefined)}\n`);
      const behind = sessions.filter((session) => session.indexBehind !== undefined);
      if (behind.length > 0) context.io.stdout(`${formatLag(behind)}\n`);
    });
}

/** The note under the table for running sessions whose turn's events are not indexed yet. */
function formatLag(behind: readonly { id: string; indexBehind?: number }[]): string {
  const named = behind.map(
    ({ id, indexBehind = 0 }) => `${id} (${indexBehind} event${indexBehind === 1 ? '' : 's'})`,
  );
  return `not indexed yet (counted and searchable when the running turn ends): ${named.join(', ')}`;
}

/** The list as a table; a child follows its parent, indented, when both are on the page. */
export function formatSessionTable(sessions: readonly SessionSummary[], withMatches: boolean): string {
  const rows = orderAsTree(sessions).map(({ session, depth }) => {
    const row = [
      `${'  '.repeat(depth)}${session.id}`,
      clip(session.title ?? '(untitled)', 40),
      clipLeft(session.projectFolder, 30),
      clip(session.model, 24),
      session.status,
      String(session.eventCount),
      formatTime(session.updatedAt),
    ];
    if (withMatches) row.push(clip(session.snippet ?? '', 60));
    return row;
  });
  const header = ['ID', 'TITLE', 'PROJECT', 'MODEL', 'STATUS', 'EVENTS', 'UPDATED'];
  if (withMatches) header.push('MATCH');
  return formatTable(header, rows);
}

function orderAsTree(sessions: readonly SessionSummary[]): { session: SessionSummary; depth: number }[] {
  const onPage = new Set(sessions.map((session) => session.id));
  const children = new Map<string, SessionSummary[]>();
  for (const session of sessions) {
    if (session.parentId === undefined || !onPage.has(session.parentId)) continue;
    const siblings = children.get(session.parentId) ?? [];
    siblings.push(session);
    children.set(session.parentId, siblings);
  }
  const ordered: { session: SessionSummary; depth: number }[] = [];
  const visited = new Set<string>();
  const visit = (session: SessionSummary, depth: number): void => {
    // A parent cycle (a corrupt index) must not loop forever.
    if (visited.has(session.id)) return;
    visited.add(session.id);
    ordered.push({ session, depth });
    for (const child of children.get(session.id) ?? []) visit(child, depth + 1);
  };
  for (const session of sessions) {
    const isChildOnPage = session.parentId !== undefined && onPage.has(session.parentId);
    if (!isChildOnPage) visit(session, 0);
  }
  // Sessions only reachable through a cycle are still listed.
  for (const session of sessions) visit(session, 0);
  return ordered;
}

/** An ISO time as local "YYYY-MM-DD HH:MM", the precision a list needs. */
function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
