import './charts.css';
import type { JSX, KeyboardEvent } from 'react';
import { formatTokens } from '../../lib/format.js';
import { niceCeiling, ticksUpTo } from './scale.js';
import { useElementWidth } from './useElementWidth.js';

/** One bar of the chart: a turn's tokens by kind and its cost. */
export type TokenCostPoint = {
  turn: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of outputTokens, those spent reasoning (drawn as their own part of the output). */
  reasoningTokens?: number;
  costUsd: number;
  /** False when some request of the turn had no price: `costUsd` is then only the priced part. Default true. */
  costKnown?: boolean;
};

const HEIGHT = 200;
const PAD = { top: 12, right: 60, bottom: 24, left: 52 };
/** Stacked from the bottom up, with the class that colours each part (charts.css). */
const PARTS: readonly {
  key: string;
  label: string;
  className: string;
  value: (p: TokenCostPoint) => number;
}[] = [
  { key: 'cacheRead', label: 'Cache read', className: 'part-cache-read', value: (p) => p.cacheReadTokens },
  { key: 'input', label: 'Input', className: 'part-input', value: (p) => p.inputTokens },
  {
    key: 'cacheWrite',
    label: 'Cache write',
    className: 'part-cache-write',
    value: (p) => p.cacheWriteTokens,
  },
  // Reasoning is part of the output (billed as output): the output bar is split, not grown.
  { key: 'reasoning', label: 'Reasoning', className: 'part-reasoning', value: (p) => p.reasoningTokens ?? 0 },
  {
    key: 'output',
    label: 'Output',
    className: 'part-output',
    value: (p) => p.outputTokens - (p.reasoningTokens ?? 0),
  },
];

/**
 * Tokens per turn as stacked bars (cache read, input, cache write, output; left axis) and cost per turn as
 * a line (right axis), laid out in pixels for the container's width. Each bar says its numbers in a
 * tooltip and to screen readers; `onSelect` makes bars buttons (Enter or click).
 */
export function TokenCostChart({
  points,
  formatCost,
  onSelect,
  label = 'Tokens and cost per turn',
}: {
  points: readonly TokenCostPoint[];
  /** Words for a cost; `known` false means unpriced requests are missing from `usd`. */
  formatCost: (usd: number, known: boolean) => string;
  onSelect?: (turn: number) => void;
  label?: string;
}): JSX.Element {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const plotWidth = Math.max(0, width - PAD.left - PAD.right);
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const totals = points.map(
    (point) => point.inputTokens + point.outputTokens + point.cacheReadTokens + point.cacheWriteTokens,
  );
  const tokenMax = niceCeiling(Math.max(0, ...totals));
  const costPeak = Math.max(0, ...points.map((point) => point.costUsd));
  const costMax = niceCeiling(costPeak);
  // Without any priced request the cost axis and line would only say $0: they are left out.
  const showCost = costPeak > 0;
  const slot = points.length > 0 ? plotWidth / points.length : 0;
  const barWidth = Math.max(1, Math.min(36, slot * 0.7));
  const y = (tokens: number) => PAD.top + plotHeight - (tokens / tokenMax) * plotHeight;
  const yCost = (usd: number) => PAD.top + plotHeight - (usd / costMax) * plotHeight;
  const xCenter = (index: number) => PAD.left + slot * index + slot / 2;
  // Every turn labelled when there is room (about 28 px a label), else every k-th.
  const labelEvery = Math.max(1, Math.ceil(28 / Math.max(slot, 1)));
  // A turn with no priced request has no cost to plot (unknown, not $0): the line breaks there.
  const unknownCost = (point: TokenCostPoint) => point.costKnown === false && point.costUsd === 0;
  const costPath = points
    .map((point, index) => {
      if (unknownCost(point)) return '';
      const previous = points[index - 1];
      const move = index === 0 || (previous !== undefined && unknownCost(previous)) ? 'M' : 'L';
      return `${move}${xCenter(index).toFixed(1)},${yCost(point.costUsd).toFixed(1)}`;
    })
    .filter(Boolean)
    .join(' ');

  const describe = (point: TokenCostPoint, total: number) =>
    `Turn ${point.turn}: ${formatTokens(total)} tokens (input ${formatTokens(point.inputTokens)}, output ${formatTokens(
      point.outputTokens,
    )}${point.reasoningTokens ? ` of which reasoning ${formatTokens(point.reasoningTokens)}` : ''}, cache read ${formatTokens(point.cacheReadTokens)}, cache write ${formatTokens(point.cacheWriteTokens)}), cost ${formatCost(point.costUsd, point.costKnown ?? true)}`;

  return (
    <div className="chart token-cost-chart" ref={ref}>
      {width > 0 ? (
        <svg width={width} height={HEIGHT} role="group" aria-label={label}>
          {ticksUpTo(tokenMax).map((tick) => (
            <g key={`t${tick}`} className="chart-grid">
              <line x1={PAD.left} x2={PAD.left + plotWidth} y1={y(tick)} y2={y(tick)} />
              <text x={PAD.left - 6} y={y(tick)} dy="0.32em" textAnchor="end">
                {formatTokens(tick)}
              </text>
            </g>
          ))}
          {(showCost ? ticksUpTo(costMax) : []).map((tick) => (
            <text
              key={`c${tick}`}
              className="chart-axis-cost"
              x={PAD.left + plotWidth + 6}
              y={yCost(tick)}
              dy="0.32em"
            >
              {formatCost(tick, true)}
            </text>
          ))}
          {points.map((point, index) => {
            const total = totals[index] ?? 0;
            const x = xCenter(index) - barWidth / 2;
            let base = 0;
            const text = describe(point, total);
            const select = onSelect ? () => onSelect(point.turn) : undefined;
            const onKeyDown = select
              ? (event: KeyboardEvent) => {
                  if (event.key === 'Enter' || event.key === ' ') {
                    event.preventDefault();
                    select();
                  }
                }
              : undefined;
            return (
              <g
                key={point.turn}
                className="chart-bar"
                data-turn={point.turn}
                {...(select
                  ? { role: 'button', tabIndex: 0, onClick: select, onKeyDown, 'aria-label': text }
                  : { 'aria-label': text, role: 'img' })}
              >
                <title>{text}</title>
                {/* A transparent full-height target, so thin bars are easy to hover and click. */}
                <rect
                  className="chart-hit"
                  x={PAD.left + slot * index}
                  y={PAD.top}
                  width={slot}
                  height={plotHeight}
                />
                {PARTS.map((part) => {
                  const value = part.value(point);
                  if (value <= 0) return null;
                  const top = y(base + value);
                  const height = y(base) - top;
                  base += value;
                  return (
                    <rect
                      key={part.key}
                      className={part.className}
                      x={x}
                      y={top}
                      width={barWidth}
                      height={Math.max(height, 0.5)}
                    />
                  );
                })}
                {index % labelEvery === 0 ? (
                  <text className="chart-x-label" x={xCenter(index)} y={HEIGHT - 6} textAnchor="middle">
                    {point.turn}
                  </text>
                ) : null}
              </g>
            );
          })}
          {showCost && points.length > 0 ? <path className="chart-cost-line" d={costPath} /> : null}
          {showCost && points.length <= 120
            ? points.map((point, index) =>
                unknownCost(point) ? null : (
                  <circle
                    key={`d${point.turn}`}
                    className="chart-cost-dot"
                    cx={xCenter(index)}
                    cy={yCost(point.costUsd)}
                    r={2.5}
                  />
                ),
              )
            : null}
          <line className="chart-baseline" x1={PAD.left} x2={PAD.left + plotWidth} y1={y(0)} y2={y(0)} />
        </svg>
      ) : (
        <div style={{ height: HEIGHT }} />
      )}
      <ul className="chart-legend" aria-label="Legend">
        {PARTS.map((part) => (
          <li key={part.key}>
            <span className={`legend-swatch ${part.className}`} aria-hidden="true" />
            {part.label}
          </li>
        ))}
        <li>
          <span className="legend-swatch legend-line" aria-hidden="true" />
          {showCost ? 'Cost (right axis)' : 'Cost: no priced requests'}
        </li>
      </ul>
    </div>
  );
}
