import { useMemo, type JSX } from 'react';
import { plural } from '../../lib/format.js';
import './monaco.css';

/** Lines beyond this are not rendered (a note says how many were left out). */
const MAX_LINES = 3000;

/** The class of one unified-diff line: added, removed, hunk header, file header or context. */
export function patchLineKind(line: string): 'added' | 'removed' | 'hunk' | 'header' | 'context' {
  if (
    line.startsWith('+++') ||
    line.startsWith('---') ||
    line.startsWith('diff ') ||
    line.startsWith('index ')
  ) {
    return 'header';
  }
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'added';
  if (line.startsWith('-')) return 'removed';
  return 'context';
}

/** A unified diff as coloured text, for what Monaco cannot show (binary or oversized files, unrebuildable commits). */
export function PatchView({ patch, label }: { patch: string; label: string }): JSX.Element {
  const lines = useMemo(() => patch.split('\n'), [patch]);
  const shown = lines.length > MAX_LINES ? lines.slice(0, MAX_LINES) : lines;
  return (
    <>
      <pre className="patch-view" aria-label={label} tabIndex={0}>
        {shown.map((line, index) => (
          <span key={index} className={`patch-line-${patchLineKind(line)}`}>
            {line === '' ? ' ' : line}
          </span>
        ))}
      </pre>
      {lines.length > MAX_LINES ? (
        <p className="hint">{plural(lines.length - MAX_LINES, 'more line')} not shown.</p>
      ) : null}
    </>
  );
}
