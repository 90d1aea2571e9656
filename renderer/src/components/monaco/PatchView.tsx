import { useMemo, type JSX } from 'react';
import { plural } from '../../lib/format.js';
import { classifyPatchLines } from './patchLines.js';
import './monaco.css';

/** Lines beyond this are not rendered (a note says how many were left out). */
const MAX_LINES = 3000;

/** A unified diff as coloured text, for what Monaco cannot show (binary or oversized files, unrebuildable commits). */
export function PatchView({ patch, label }: { patch: string; label: string }): JSX.Element {
  const lines = useMemo(() => patch.split('\n'), [patch]);
  const shown = useMemo(() => (lines.length > MAX_LINES ? lines.slice(0, MAX_LINES) : lines), [lines]);
  const kinds = useMemo(() => classifyPatchLines(shown), [shown]);
  return (
    <>
      <pre className="patch-view" aria-label={label} tabIndex={0}>
        {shown.map((line, index) => (
          <span key={index} className={`patch-line-${kinds[index] ?? 'context'}`}>
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
