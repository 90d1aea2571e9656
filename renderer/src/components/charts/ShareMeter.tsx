import './charts.css';
import type { JSX } from 'react';
import { shareOf } from './scale.js';

/** A horizontal meter of a share (0…1) with its value as text; an empty track when the share is unknown. */
export function ShareMeter({ share, label }: { share: number | null; label: string }): JSX.Element {
  const known = share !== null && Number.isFinite(share);
  return (
    <span
      className="share-meter"
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      {...(known ? { 'aria-valuenow': Math.round(shareOf(share, 1) * 100) } : {})}
    >
      <span className="share-meter-fill" style={{ width: `${known ? shareOf(share, 1) * 100 : 0}%` }} />
    </span>
  );
}
