import type { JSX, ReactNode } from 'react';
import type { SessionSummary } from '../../../../main/ipc/contract.js';
import { StatusBadge, statusLabel } from '../../components/StatusBadge.js';
import { folderName, formatDateTime, formatRelativeTime } from '../../lib/format.js';

type Props = {
  session: SessionSummary;
  id: string;
  active: boolean;
  current: boolean;
  onOpen: () => void;
  onResume: () => void;
  onArchive: () => void;
  /** The session it came from, when listed under it (a fork or a subagent's run). */
  parent?: { id: string; title: string | undefined } | undefined;
};

/** One session in the browser: title, status, model, last activity, and the search snippet when searching. */
export function SessionRow({
  session,
  id,
  active,
  current,
  onOpen,
  onResume,
  onArchive,
  parent,
}: Props): JSX.Element {
  const title = sessionTitle(session);
  const from = parent ? `, from ${sessionTitle(parent)}` : '';
  const label = `${title}${from}, ${statusLabel(session.status)}, ${session.model}, ${folderName(session.projectFolder)}, ${formatRelativeTime(session.updatedAt)}${session.projectExists ? '' : ', folder missing, read-only'}${session.archived ? ', archived' : ''}${session.indexBehind ? ', search updating' : ''}`;
  return (
    <div
      id={id}
      role="option"
      aria-selected={active}
      aria-current={current ? 'page' : undefined}
      aria-label={label}
      className={`session-row${active ? ' is-active' : ''}${current ? ' is-current' : ''}${session.archived ? ' is-archived' : ''}${parent ? ' is-child' : ''}`}
      onClick={onOpen}
      data-session-id={session.id}
    >
      <div className="session-row-top">
        {parent ? (
          <span className="session-fork-mark" aria-hidden="true" title={`From ${sessionTitle(parent)}`}>
            ⎇
          </span>
        ) : null}
        <span className="session-title">{title}</span>
        <StatusBadge status={session.status} />
      </div>
      <div className="session-row-meta">
        <span className="session-model">{session.model}</span>
        <span aria-hidden="true">·</span>
        <time dateTime={session.updatedAt} title={formatDateTime(session.updatedAt)}>
          {formatRelativeTime(session.updatedAt)}
        </time>
        {session.archived ? <span className="tag">archived</span> : null}
        {session.indexBehind ? (
          <span className="tag tag-updating" title={indexBehindTitle(session.indexBehind)}>
            updating…
          </span>
        ) : null}
        <span className="session-row-actions">
          {session.status === 'interrupted' && session.projectExists ? (
            <button
              type="button"
              className="link-button"
              tabIndex={-1}
              aria-label={`Resume ${title}`}
              onClick={(event) => {
                event.stopPropagation();
                onResume();
              }}
            >
              Resume
            </button>
          ) : null}
          <button
            type="button"
            className="link-button"
            tabIndex={-1}
            aria-label={`${session.archived ? 'Restore' : 'Archive'} ${title}`}
            onClick={(event) => {
              event.stopPropagation();
              onArchive();
            }}
          >
            {session.archived ? 'Restore' : 'Archive'}
          </button>
        </span>
      </div>
      {session.snippet ? <p className="session-snippet">{highlightSnippet(session.snippet)}</p> : null}
    </div>
  );
}

/** The title a person recognises: the set title, else a short id. */
export function sessionTitle(session: Pick<SessionSummary, 'title' | 'id'>): string {
  return session.title?.trim() || `Session ${session.id.slice(0, 8)}`;
}

/** What the "updating…" mark means: the running turn's events are counted and searchable when it ends. */
export function indexBehindTitle(behind: number): string {
  return `Search and counts are catching up: ${behind} event${behind === 1 ? '' : 's'} of the running turn not indexed yet (they are when it ends)`;
}

/** Turns the index's [bracketed] matches into <mark> elements. */
function highlightSnippet(snippet: string): ReactNode[] {
  return snippet
    .split(/(\[[^\]]*\])/g)
    .map((part, index) =>
      part.startsWith('[') && part.endsWith(']') ? <mark key={index}>{part.slice(1, -1)}</mark> : part,
    );
}
