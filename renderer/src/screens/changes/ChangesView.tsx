import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, useState, type JSX } from 'react';
import type { PersistentCommitReport } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { EmptyState, ErrorState } from '../../components/States.js';
import { formatClock, formatDateTime, plural } from '../../lib/format.js';
import { notifyChangesChanged } from './changesBus.js';
import { fileKey, foldChangeRows, ROW_HEIGHTS, type ChangeRow, type FileRef } from './changeRows.js';
import { FileDiff } from './FileDiff.js';
import { useCommitHistory, useUncommitted } from './useChanges.js';
import './changes.css';

type Props = {
  sessionId: string;
  /** No writes: the session is read-only here (another process holds it, or its folder is gone). */
  readOnly: boolean;
  /** A turn runs: apply and discard wait for it. */
  running: boolean;
  onClose: () => void;
};

/** What the last apply or discard did, in words, per dir. */
type Outcome =
  | { kind: 'applied'; reports: PersistentCommitReport[] }
  | { kind: 'discarded'; dirs: string[] }
  | { kind: 'failed'; message: string };

const CHANGE_LABEL = { added: 'A', modified: 'M', deleted: 'D' } as const;

/**
 * The session's changes in its Persistent Dir checkouts: what is uncommitted now (with Apply and Discard for
 * manual dirs, conflicts marked file by file) and what each turn committed, as a virtualized list beside a
 * Monaco diff of the selected file against the project folder.
 */
export function ChangesView({ sessionId, readOnly, running, onClose }: Props): JSX.Element {
  const uncommitted = useUncommitted(sessionId, true);
  const history = useCommitHistory(sessionId);
  const [selected, setSelected] = useState<FileRef | undefined>();
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const [busy, setBusy] = useState<string | undefined>();
  const [confirmDiscard, setConfirmDiscard] = useState<string | undefined>();
  const [revision, setRevision] = useState(0);
  const scrollRef = useRef<HTMLDivElement>(null);

  // Conflicts of the last apply, by dir: marked in the list until the dir is applied or discarded again.
  const conflicts = useMemo(() => {
    const map = new Map<string, Set<string>>();
    if (outcome?.kind !== 'applied') return map;
    for (const report of outcome.reports) {
      if (report.status === 'conflict') map.set(report.dir, new Set(report.conflicts));
    }
    return map;
  }, [outcome]);

  const rows = useMemo(
    () => foldChangeRows(uncommitted.data, history.data, conflicts),
    [uncommitted.data, history.data, conflicts],
  );

  // Every re-read of the uncommitted changes may have changed the selected file's texts.
  useEffect(() => setRevision((n) => n + 1), [uncommitted.data]);

  // The selection follows the data: a file no longer listed is let go; with none, once both lists are read,
  // the first uncommitted file (else the newest committed one) is shown.
  const loaded = uncommitted.data !== undefined && history.data !== undefined;
  useEffect(() => {
    const files = rows.filter((row): row is Extract<ChangeRow, { kind: 'file' }> => row.kind === 'file');
    if (selected && files.some((row) => fileKey(row.ref) === fileKey(selected))) return;
    if (!loaded) return;
    setSelected(files[0]?.ref);
  }, [rows, selected, loaded]);

  useEffect(() => {
    if (confirmDiscard === undefined) return;
    const timer = setTimeout(() => setConfirmDiscard(undefined), 6000);
    return () => clearTimeout(timer);
  }, [confirmDiscard]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => ROW_HEIGHTS[rows[index]?.kind ?? 'file'],
    getItemKey: (index) => rows[index]?.key ?? index,
    overscan: 8,
  });

  const apply = async (dir: string) => {
    setBusy(dir);
    setConfirmDiscard(undefined);
    try {
      const result = await call(keel().persistent.apply({ sessionId, dirs: [dir] }));
      setOutcome({ kind: 'applied', reports: result.reports });
    } catch (error) {
      setOutcome({ kind: 'failed', message: describeError(error) });
    } finally {
      setBusy(undefined);
      notifyChangesChanged(sessionId);
    }
  };

  const discard = async (dir: string) => {
    if (confirmDiscard !== dir) {
      setConfirmDiscard(dir);
      return;
    }
    setBusy(dir);
    setConfirmDiscard(undefined);
    try {
      const result = await call(keel().persistent.discard({ sessionId, dirs: [dir] }));
      setOutcome({ kind: 'discarded', dirs: result.discarded });
    } catch (error) {
      setOutcome({ kind: 'failed', message: describeError(error) });
    } finally {
      setBusy(undefined);
      notifyChangesChanged(sessionId);
    }
  };

  const selectedKey = selected ? fileKey(selected) : undefined;
  const selectedConflict = selected ? (conflicts.get(selected.dir)?.has(selected.path) ?? false) : false;
  const noCheckouts = uncommitted.data?.hasCheckouts === false;
  const canAct = !readOnly && !running && busy === undefined;

  return (
    <section className="changes-view" aria-label="Changes">
      <header className="changes-header">
        <h2>Changes</h2>
        <span className="muted changes-subtitle">
          in this session’s checkouts, against the project folder
        </span>
        <span className="changes-spacer" />
        <button
          type="button"
          className="link-button"
          onClick={() => {
            uncommitted.reload();
            history.reload();
          }}
        >
          Refresh
        </button>
        <button type="button" className="button-secondary" onClick={onClose}>
          Back to transcript
        </button>
      </header>
      {outcome ? <OutcomeBanner outcome={outcome} onDismiss={() => setOutcome(undefined)} /> : null}
      {running ? (
        <p className="changes-running" role="status">
          A turn is running: apply and discard wait until it ends.
        </p>
      ) : null}
      {uncommitted.error ? <ErrorState message={uncommitted.error} onRetry={uncommitted.reload} /> : null}
      {noCheckouts ? (
        <EmptyState title="This session works on its project folder directly.">
          <p className="muted">
            Its edits land in the folder as they happen: there is nothing to review here.
          </p>
        </EmptyState>
      ) : (
        <div className="changes-body">
          <div ref={scrollRef} className="changes-list" role="list" aria-label="Changed files">
            <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
              {virtualizer.getVirtualItems().map((item) => {
                const row = rows[item.index];
                if (!row) return null;
                return (
                  <div
                    key={item.key}
                    className={`virtual-row changes-row changes-row-${row.kind}`}
                    role="listitem"
                    style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHTS[row.kind] }}
                  >
                    <Row
                      row={row}
                      selectedKey={selectedKey}
                      onSelect={setSelected}
                      canAct={canAct}
                      busy={busy}
                      confirmDiscard={confirmDiscard}
                      onApply={(dir) => void apply(dir)}
                      onDiscard={(dir) => void discard(dir)}
                    />
                  </div>
                );
              })}
            </div>
          </div>
          <div className="changes-diff">
            {selected ? (
              <FileDiff
                sessionId={sessionId}
                file={selected}
                revision={revision}
                conflict={selectedConflict}
              />
            ) : (
              <EmptyState title="No file selected">
                <p className="muted">Pick a changed file on the left to see its diff.</p>
              </EmptyState>
            )}
          </div>
        </div>
      )}
    </section>
  );
}

type RowProps = {
  row: ChangeRow;
  selectedKey: string | undefined;
  onSelect: (ref: FileRef) => void;
  canAct: boolean;
  busy: string | undefined;
  confirmDiscard: string | undefined;
  onApply: (dir: string) => void;
  onDiscard: (dir: string) => void;
};

function Row({
  row,
  selectedKey,
  onSelect,
  canAct,
  busy,
  confirmDiscard,
  onApply,
  onDiscard,
}: RowProps): JSX.Element {
  switch (row.kind) {
    case 'section':
      return <h3 className="changes-section">{row.title}</h3>;
    case 'empty':
      return <p className="changes-empty muted">{row.text}</p>;
    case 'dir':
      return (
        <div className="changes-dir" aria-label={`Checkout ${row.dir}`}>
          <div className="changes-dir-title">
            <strong>{row.dir}</strong>
            <span className={`tag${row.commit === 'manual' ? ' tag-warning' : ''}`}>{row.commit}</span>
            {row.readOnly ? <span className="tag">read-only</span> : null}
            <span className="muted">{plural(row.fileCount, 'file')}</span>
          </div>
          {row.commit === 'manual' && !row.readOnly ? (
            <div className="changes-dir-actions">
              <button
                type="button"
                className="button-primary"
                disabled={!canAct}
                onClick={() => onApply(row.dir)}
                title="Commit these changes to the project folder (three-way merged)"
              >
                {busy === row.dir ? 'Working…' : `Apply to ${row.dir}`}
              </button>
              <button
                type="button"
                className={confirmDiscard === row.dir ? 'button-danger' : 'button-secondary'}
                disabled={!canAct}
                onClick={() => onDiscard(row.dir)}
                title="Throw these changes away (the checkout is reset from the project folder)"
              >
                {confirmDiscard === row.dir ? `Confirm: discard ${plural(row.fileCount, 'file')}` : 'Discard'}
              </button>
            </div>
          ) : (
            <p className="changes-dir-note muted">
              {row.readOnly
                ? 'Read-only for this session: never committed; the next turn discards them.'
                : 'Committed to the project folder when the turn ends.'}
            </p>
          )}
        </div>
      );
    case 'turn':
      return (
        <div className="changes-turn">
          <strong>{row.turn === 0 ? 'Before the first prompt' : `Turn ${row.turn}`}</strong>
          {row.prompt ? (
            <span className="changes-turn-prompt muted" title={row.prompt}>
              {row.prompt}
            </span>
          ) : null}
        </div>
      );
    case 'commit':
      return (
        <div className="changes-commit muted">
          committed to <strong>{row.dir}</strong> ·{' '}
          <time dateTime={row.at} title={formatDateTime(row.at)}>
            {formatClock(row.at)}
          </time>{' '}
          · {plural(row.fileCount, 'file')}
        </div>
      );
    case 'file': {
      const key = fileKey(row.ref);
      const selected = key === selectedKey;
      return (
        <button
          type="button"
          className={`changes-file${selected ? ' is-selected' : ''}${row.conflict ? ' is-conflict' : ''}`}
          aria-current={selected ? 'true' : undefined}
          aria-label={`${row.ref.path}, ${row.change}${row.conflict ? ', conflict' : ''}${row.ref.commitSeq !== undefined ? `, commit ${row.ref.commitSeq}` : ', uncommitted'}`}
          onClick={() => onSelect(row.ref)}
          title={row.ref.path}
        >
          <span className={`change-kind change-${row.change}`} aria-hidden="true">
            {CHANGE_LABEL[row.change]}
          </span>
          <span className="changes-file-path">{row.ref.path}</span>
          {row.conflict ? <span className="tag tag-danger">conflict</span> : null}
        </button>
      );
    }
  }
}

/** What the last apply or discard did: committed files (merged ones counted), conflicts by file, or the error. */
function OutcomeBanner({ outcome, onDismiss }: { outcome: Outcome; onDismiss: () => void }): JSX.Element {
  const conflicted =
    outcome.kind === 'applied' && outcome.reports.some((report) => report.status === 'conflict');
  const tone = outcome.kind === 'failed' || conflicted ? 'changes-outcome-bad' : 'changes-outcome-good';
  return (
    <div className={`changes-outcome ${tone}`} role={tone === 'changes-outcome-bad' ? 'alert' : 'status'}>
      <div className="changes-outcome-text">
        {outcome.kind === 'failed' ? <p>{outcome.message}</p> : null}
        {outcome.kind === 'discarded' ? (
          <p>
            Discarded the changes in {outcome.dirs.join(', ') || 'nothing'}: the checkout matches the project
            folder again.
          </p>
        ) : null}
        {outcome.kind === 'applied'
          ? outcome.reports.map((report) => (
              <div key={report.dir}>
                {report.status === 'unchanged' ? <p>{report.dir}: nothing to apply.</p> : null}
                {report.status === 'committed' ? (
                  <p>
                    Applied {plural(report.files.length, 'file')} to {report.dir}
                    {report.files.some((file) => file.merged)
                      ? ` (${report.files.filter((file) => file.merged).length} merged with changes made in the folder meanwhile)`
                      : ''}
                    .
                  </p>
                ) : null}
                {report.status === 'conflict' ? (
                  <>
                    <p>
                      <strong>Nothing was applied to {report.dir}:</strong> the project folder changed{' '}
                      {report.conflicts.length === 1 ? 'this file' : 'these files'} in the same places since
                      the session’s checkout was made. Review each one below, then discard the session’s
                      changes or make the edit by hand. The session’s whole change is kept as{' '}
                      <code>{report.patchArtifact}</code>.
                    </p>
                    <ul className="changes-conflicts" aria-label={`Conflicts in ${report.dir}`}>
                      {report.conflicts.map((file) => (
                        <li key={file}>
                          <code>{file}</code>
                        </li>
                      ))}
                    </ul>
                  </>
                ) : null}
              </div>
            ))
          : null}
      </div>
      <button type="button" className="link-button" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}
