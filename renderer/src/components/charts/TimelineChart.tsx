import './charts.css';
import type { CSSProperties, JSX } from 'react';
import { niceCeiling, niceTickCount, shareOf, ticksUpTo } from './scale.js';

/** One bar of a timeline: where it starts and how long it lasts, in milliseconds from the start. */
export type TimelineBar = {
  key: string;
  label: string;
  /** Colours the bar (`timeline-kind-<kind>` in charts.css). */
  kind: string;
  startMs: number;
  durationMs: number;
  /** The tooltip and the screen reader text. */
  title: string;
  /** Still going (an approval nobody answered yet): drawn open-ended. */
  open?: boolean;
};

/**
 * A Gantt-style timeline: one row per bar, a label on the left, the bar placed on a shared axis from 0 to
 * `totalMs` (rounded up), its duration beside it. Zero-length bars stay visible as a thin mark.
 */
export function TimelineChart({
  bars,
  totalMs,
  formatDuration,
  label,
}: {
  bars: readonly TimelineBar[];
  totalMs: number;
  formatDuration: (ms: number) => string;
  label: string;
}): JSX.Element {
  const axisMax = niceCeiling(Math.max(totalMs, ...bars.map((bar) => bar.startMs + bar.durationMs), 1));
  const steps = niceTickCount(axisMax);
  // Grid lines in every row's track fall on the axis ticks.
  const grid = { '--tick-step': `${100 / steps}%` } as CSSProperties;
  return (
    <div className="timeline" role="table" aria-label={label} style={grid}>
      <div className="timeline-axis" role="row" aria-hidden="true">
        <span className="timeline-label" />
        <span className="timeline-track">
          {ticksUpTo(axisMax, steps).map((tick) => (
            <span key={tick} className="timeline-tick" style={{ left: `${shareOf(tick, axisMax) * 100}%` }}>
              {formatDuration(tick)}
            </span>
          ))}
        </span>
      </div>
      {bars.map((bar) => {
        const left = shareOf(bar.startMs, axisMax) * 100;
        const width = shareOf(bar.durationMs, axisMax) * 100;
        return (
          <div
            key={bar.key}
            className={`timeline-row timeline-kind-${bar.kind}`}
            role="row"
            title={bar.title}
          >
            <span className="timeline-label" role="rowheader">
              {bar.label}
            </span>
            <span className="timeline-track" role="cell" aria-label={bar.title}>
              <span
                className={`timeline-bar${bar.open ? ' is-open' : ''}`}
                style={{ left: `${left}%`, width: `max(${width}%, 2px)` }}
              />
              <span
                className="timeline-duration"
                style={
                  left + width > 80
                    ? { right: `${100 - left}%`, paddingRight: 6 }
                    : { left: `calc(${left + width}% + 6px)` }
                }
              >
                {formatDuration(bar.durationMs)}
              </span>
            </span>
          </div>
        );
      })}
    </div>
  );
}
