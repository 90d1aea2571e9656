import { useVirtualizer } from '@tanstack/react-virtual';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type JSX,
  type KeyboardEvent,
  type RefObject,
} from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useApp } from '../../appContext.js';
import { EmptyState, ErrorState, LoadingState } from '../../components/States.js';
import { markOnce } from '../../lib/perf.js';
import { useDebounced } from '../../lib/useDebounced.js';
import { buildListRows, type ListRow } from './listRows.js';
import { ProjectHeading } from './ProjectHeading.js';
import { SessionRow } from './SessionRow.js';
import { useSessionList } from './useSessionList.js';

/** Must match the heights in browser.css. */
const ROW_HEIGHTS = { project: 34, session: 58, sessionWithSnippet: 100 } as const;

const rowId = (row: ListRow) => `row-${row.key.replace(/[^a-zA-Z0-9_-]/g, '_')}`;

/** Opening a session from the list: a search hit's first matched word goes with it, for the transcript to find. */
function openRoute(session: { id: string; snippet?: string | undefined }): {
  screen: 'session';
  sessionId: string;
  find?: string;
} {
  const matched = session.snippet ? /\[([^\]]+)\]/.exec(session.snippet)?.[1] : undefined;
  return { screen: 'session', sessionId: session.id, ...(matched ? { find: matched } : {}) };
}

/** All sessions grouped by project folder, newest first, with search as you type; virtualized for tens of thousands. */
export function SessionBrowser({
  searchRef,
}: {
  searchRef: RefObject<HTMLInputElement | null>;
}): JSX.Element {
  const { route, navigate } = useApp();
  const [search, setSearch] = useState('');
  const [includeArchived, setIncludeArchived] = useState(false);
  const debouncedSearch = useDebounced(search, 150);
  const list = useSessionList({ search: debouncedSearch, includeArchived });
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [activeIndex, setActiveIndex] = useState(-1);
  const [actionError, setActionError] = useState<string | undefined>();
  const rows = useMemo(() => buildListRows(list.sessions, collapsed), [list.sessions, collapsed]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const currentId = route.screen === 'session' ? route.sessionId : undefined;

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    // Rows have fixed heights (browser.css), so sizes are known without measuring the DOM.
    estimateSize: (index) => {
      const row = rows[index];
      if (row?.type === 'project') return ROW_HEIGHTS.project;
      return row?.session.snippet ? ROW_HEIGHTS.sessionWithSnippet : ROW_HEIGHTS.session;
    },
    getItemKey: (index) => rows[index]?.key ?? index,
    overscan: 8,
  });
  const virtualItems = virtualizer.getVirtualItems();

  useLayoutEffect(() => {
    if (virtualItems.length > 0 && rows.some((row) => row.type === 'session'))
      markOnce('keel:list-rows-rendered');
  }, [virtualItems.length, rows]);

  // Near the end of what is loaded: fetch the next page.
  const lastVisible = virtualItems.at(-1)?.index ?? -1;
  const { hasMore, loadingMore, loadMore } = list;
  useEffect(() => {
    if (hasMore && !loadingMore && lastVisible >= rows.length - 20) loadMore();
  }, [lastVisible, rows.length, hasMore, loadingMore, loadMore]);

  useEffect(() => {
    setActiveIndex((index) => Math.min(index, rows.length - 1));
  }, [rows.length]);

  const toggleFolder = useCallback((folder: string) => {
    setCollapsed((previous) => {
      const next = new Set(previous);
      if (next.has(folder)) next.delete(folder);
      else next.add(folder);
      return next;
    });
  }, []);

  const resume = useCallback(
    async (sessionId: string) => {
      setActionError(undefined);
      try {
        await call(keel().turns.resume({ sessionId }));
        navigate({ screen: 'session', sessionId });
      } catch (error) {
        setActionError(describeError(error));
      }
    },
    [navigate],
  );

  const archive = useCallback(
    async (sessionId: string, archived: boolean) => {
      setActionError(undefined);
      try {
        await call(keel().sessions.archive({ sessionId, archived }));
        list.refresh();
      } catch (error) {
        setActionError(describeError(error));
      }
    },
    [list],
  );

  const activate = (row: ListRow | undefined) => {
    if (!row) return;
    if (row.type === 'project') toggleFolder(row.folder);
    else navigate(openRoute(row.session));
  };

  const moveTo = (index: number) => {
    const bounded = Math.max(0, Math.min(rows.length - 1, index));
    setActiveIndex(bounded);
    virtualizer.scrollToIndex(bounded, { align: 'auto' });
  };

  const onListKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const row = rows[activeIndex];
    switch (event.key) {
      case 'ArrowDown':
        moveTo(activeIndex + 1);
        break;
      case 'ArrowUp':
        moveTo(activeIndex - 1);
        break;
      case 'Home':
        moveTo(0);
        break;
      case 'End':
        moveTo(rows.length - 1);
        break;
      case 'PageDown':
        moveTo(activeIndex + 10);
        break;
      case 'PageUp':
        moveTo(activeIndex - 10);
        break;
      case 'Enter':
        activate(row);
        break;
      case 'ArrowLeft':
        if (row?.type === 'project' && !row.collapsed) toggleFolder(row.folder);
        break;
      case 'ArrowRight':
        if (row?.type === 'project' && row.collapsed) toggleFolder(row.folder);
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const onSearchKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'Enter') {
      event.preventDefault();
      const first = rows.findIndex((row) => row.type === 'session');
      if (first >= 0) {
        setActiveIndex(first);
        scrollRef.current?.focus();
        if (event.key === 'Enter') activate(rows[first]);
      }
    } else if (event.key === 'Escape' && search) {
      event.preventDefault();
      setSearch('');
    }
  };

  const searching = debouncedSearch.trim() !== '';
  const activeRow = rows[activeIndex];

  return (
    <section className="browser" aria-label="Sessions">
      <div className="browser-controls">
        <label className="visually-hidden" htmlFor="session-search">
          Search sessions
        </label>
        <input
          id="session-search"
          ref={searchRef}
          type="search"
          className="search-input"
          placeholder="Search titles and messages"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
          onKeyDown={onSearchKey}
          autoComplete="off"
          spellCheck={false}
        />
        <label className="checkbox">
          <input
            type="checkbox"
            checked={includeArchived}
            onChange={(event) => setIncludeArchived(event.target.checked)}
          />
          Show archived
        </label>
      </div>
      {actionError ? <ErrorState message={actionError} onRetry={() => setActionError(undefined)} /> : null}
      {list.error && list.sessions.length === 0 ? (
        <ErrorState message={list.error} onRetry={list.refresh} />
      ) : list.loading && list.sessions.length === 0 ? (
        <LoadingState label={searching ? 'Searching…' : 'Loading sessions…'} />
      ) : rows.length === 0 ? (
        searching ? (
          <EmptyState title={`Nothing matches “${debouncedSearch.trim()}”.`}>
            <p>Search looks at titles and the text of every message. Try fewer or other words.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No sessions yet.">
            <p>Start one with New session: pick a project folder and a model.</p>
          </EmptyState>
        )
      ) : null}
      <div
        ref={scrollRef}
        className="browser-list"
        role="listbox"
        tabIndex={rows.length > 0 ? 0 : -1}
        aria-label={searching ? `Sessions matching ${debouncedSearch.trim()}` : 'Sessions by project'}
        aria-activedescendant={activeRow ? rowId(activeRow) : undefined}
        aria-busy={list.loading}
        onKeyDown={onListKey}
        onFocus={() => {
          if (activeIndex < 0 && rows.length > 0)
            setActiveIndex(rows.findIndex((row) => row.type === 'session'));
        }}
      >
        <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
          {virtualItems.map((item) => {
            const row = rows[item.index];
            if (!row) return null;
            return (
              <div
                key={item.key}
                data-index={item.index}
                className="virtual-row"
                style={{ transform: `translateY(${item.start}px)`, height: item.size }}
              >
                {row.type === 'project' ? (
                  <ProjectHeading
                    id={rowId(row)}
                    folder={row.folder}
                    exists={row.exists}
                    count={row.count}
                    collapsed={row.collapsed}
                    active={item.index === activeIndex}
                    onToggle={() => {
                      setActiveIndex(item.index);
                      toggleFolder(row.folder);
                    }}
                  />
                ) : (
                  <SessionRow
                    id={rowId(row)}
                    session={row.session}
                    parent={row.parent}
                    active={item.index === activeIndex}
                    current={row.session.id === currentId}
                    onOpen={() => {
                      setActiveIndex(item.index);
                      navigate(openRoute(row.session));
                    }}
                    onResume={() => void resume(row.session.id)}
                    onArchive={() => void archive(row.session.id, !row.session.archived)}
                  />
                )}
              </div>
            );
          })}
        </div>
      </div>
      <p className="browser-footer" aria-live="polite">
        {list.sessions.length > 0
          ? `${list.sessions.length}${list.hasMore ? '+' : ''} session${list.sessions.length === 1 ? '' : 's'}${searching ? ' found' : ''}`
          : ''}
        {list.loadingMore ? ' · loading more…' : ''}
      </p>
    </section>
  );
}
