import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState, type JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { ErrorState, LoadingState } from '../../components/States.js';
import { DiffView } from '../../components/monaco/DiffView.js';
import { plural } from '../../lib/format.js';
import { diffLines, type LineDiff } from './payloadDiff.js';

/** Monaco's diff editor, or the plain unified text diff (searchable with the page, cheap to render). */
type ViewMode = 'editor' | 'text';

/**
 * "Rebuild without it": the payload the next turn would send now, and the same payload rebuilt as if this
 * compaction had never been made, as a diff (removed: what the compaction put in, the summary; added: the
 * original events it stands for). Monaco's diff editor (the approvals' DiffView) by default; a plain
 * unified text diff, virtualized, on request.
 */
export function RebuildView({
  sessionId,
  seq,
  version,
}: {
  sessionId: string;
  seq: number;
  version: number;
}): JSX.Element {
  const payload = useQuery(
    () => call(keel().compactions.payload({ sessionId, seq })),
    [sessionId, seq, version],
  );
  const [mode, setMode] = useState<ViewMode>('editor');
  const [diff, setDiff] = useState<LineDiff | undefined>();
  useEffect(() => {
    setDiff(undefined);
    const data = payload.data;
    if (!data || mode !== 'text') return;
    // Let the "comparing" state paint before a large diff takes the main thread.
    const timer = setTimeout(() => setDiff(diffLines(data.current.text, data.without.text)), 0);
    return () => clearTimeout(timer);
  }, [payload.data, mode]);

  if (payload.error) return <ErrorState message={payload.error} onRetry={payload.reload} />;
  if (!payload.data) return <LoadingState label="Rebuilding the payload…" />;
  const { current, without } = payload.data;
  return (
    <section className="rebuild-view" aria-label="Rebuild without it">
      <div className="rebuild-top">
        <dl className="rebuild-stats">
          <div>
            <dt>Payload now</dt>
            <dd data-testid="payload-now">
              {plural(current.messageCount, 'message')} · {current.text.length.toLocaleString()} characters
            </dd>
          </div>
          <div>
            <dt>Rebuilt without compaction #{seq}</dt>
            <dd data-testid="payload-without">
              {plural(without.messageCount, 'message')} · {without.text.length.toLocaleString()} characters
            </dd>
          </div>
          {mode === 'text' ? (
            <div>
              <dt>Difference</dt>
              <dd>
                {diff ? (
                  <>
                    <span className="pd-count-removed">−{diff.removed.toLocaleString()}</span>{' '}
                    <span className="pd-count-added">+{diff.added.toLocaleString()}</span> lines
                    {diff.coarse ? ' (one block: too large to align line by line)' : ''}
                  </>
                ) : (
                  'comparing…'
                )}
              </dd>
            </div>
          ) : null}
        </dl>
        <div className="segmented rebuild-mode" role="group" aria-label="Diff view">
          <button type="button" aria-pressed={mode === 'editor'} onClick={() => setMode('editor')}>
            Diff editor
          </button>
          <button type="button" aria-pressed={mode === 'text'} onClick={() => setMode('text')}>
            Unified text
          </button>
        </div>
      </div>
      <p className="hint rebuild-legend">
        <span className="pd-count-removed">−</span> only in the payload now (the summary and its pinned goal)
        · <span className="pd-count-added">+</span> only without it (what the payload would hold instead: the
        original events, or an earlier compaction&apos;s summary of them)
      </p>
      {mode === 'editor' ? (
        <div className="rebuild-editor">
          <DiffView
            path="payload.txt"
            original={current.text}
            modified={without.text}
            label={`The payload now and rebuilt without compaction ${seq}`}
            sides={{ original: 'payload now', modified: `without #${seq}` }}
          />
        </div>
      ) : diff ? (
        <DiffLines diff={diff} />
      ) : (
        <LoadingState label="Comparing…" />
      )}
    </section>
  );
}

function DiffLines({ diff }: { diff: LineDiff }): JSX.Element {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: diff.rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 19,
    overscan: 20,
  });
  if (diff.rows.length === 0) return <p className="muted">The two payloads are identical.</p>;
  return (
    <div ref={scrollRef} className="pd-lines" role="table" aria-label="Payload diff" tabIndex={0}>
      <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = diff.rows[item.index];
          if (!row) return null;
          return (
            <div
              key={item.key}
              data-index={item.index}
              ref={virtualizer.measureElement}
              className={`virtual-row pd-line pd-${row.kind}`}
              style={{ transform: `translateY(${item.start}px)` }}
              role="row"
            >
              {row.kind === 'skipped' ? (
                <span className="pd-skipped" role="cell">
                  ⋯ {plural(row.count, 'unchanged line')}
                </span>
              ) : (
                <>
                  <span className="pd-number" role="cell">
                    {row.oldLine ?? ''}
                  </span>
                  <span className="pd-number" role="cell">
                    {row.newLine ?? ''}
                  </span>
                  <span className="pd-sign" role="cell" aria-label={row.kind}>
                    {row.kind === 'added' ? '+' : row.kind === 'removed' ? '−' : ' '}
                  </span>
                  <span className="pd-text" role="cell">
                    {row.text}
                  </span>
                </>
              )}
            </div>
          );
        })}
      </div>
    </div>
  );
}
