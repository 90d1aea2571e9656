import { useState, type JSX } from 'react';
import type { RevertConflict } from '../../../../../main/ipc/contract.js';
import { DiffView } from '../../../components/monaco/DiffView.js';

/** Which two of a conflict's three texts the diff shows. */
type Comparison = 'revert' | 'change' | 'since';

const COMPARISONS: { id: Comparison; label: string }[] = [
  { id: 'revert', label: 'Folder now → before the change' },
  { id: 'change', label: 'The change' },
  { id: 'since', label: 'Edited since' },
];

/**
 * The files a revert could not undo (nothing was written): each with its reason and, for text files, a Monaco
 * diff. It opens on "folder now → before the change" (what undoing would have to do to your current file);
 * the change itself and the edits made since are one click away.
 */
export function RevertConflicts({
  what,
  conflicts,
  onClose,
}: {
  what: string;
  conflicts: readonly RevertConflict[];
  onClose: () => void;
}): JSX.Element {
  return (
    <section className="revert-conflicts" aria-label="Revert conflicts">
      <header className="revert-conflicts-header">
        <strong>
          Could not undo {what}: {conflicts.length} file{conflicts.length === 1 ? '' : 's'} changed since, in
          the same places. Nothing was written.
        </strong>
        <button type="button" className="button-secondary" onClick={onClose}>
          Close
        </button>
      </header>
      <p className="muted">Edit these files by hand, or revert your own edits first, then undo again.</p>
      <ul className="revert-conflict-list">
        {conflicts.map((conflict) => (
          <ConflictFile key={`${conflict.dir}/${conflict.path}`} conflict={conflict} />
        ))}
      </ul>
    </section>
  );
}

function ConflictFile({ conflict }: { conflict: RevertConflict }): JSX.Element {
  const [comparison, setComparison] = useState<Comparison>('revert');
  const name = `${conflict.dir}/${conflict.path}`;
  const sides = conflict.sides;
  const shown =
    sides === undefined
      ? undefined
      : comparison === 'revert'
        ? { original: sides.current, modified: sides.original, words: ['folder now', 'before the change'] }
        : comparison === 'change'
          ? { original: sides.original, modified: sides.changed, words: ['before the change', 'after it'] }
          : { original: sides.changed, modified: sides.current, words: ['after the change', 'folder now'] };
  return (
    <li className="revert-conflict" aria-label={`Conflict in ${name}`}>
      <div className="revert-conflict-title">
        <code>{name}</code> <span className="muted">{conflict.reason}</span>
      </div>
      {shown ? (
        <DiffView
          path={name}
          original={shown.original}
          modified={shown.modified}
          label={`${name}: ${shown.words[0]} and ${shown.words[1]}`}
          sizing="fit"
          maxHeight={320}
          sides={{ original: shown.words[0] as string, modified: shown.words[1] as string }}
          actions={
            <div className="segmented" role="group" aria-label="Compare">
              {COMPARISONS.map((option) => (
                <button
                  key={option.id}
                  type="button"
                  aria-pressed={comparison === option.id}
                  onClick={() => setComparison(option.id)}
                >
                  {option.label}
                </button>
              ))}
            </div>
          }
        />
      ) : null}
    </li>
  );
}
