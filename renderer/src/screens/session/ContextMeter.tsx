import type { JSX } from 'react';
import { formatTokens } from '../../lib/format.js';

type Props = { usedTokens: number | null; window: number; compactAt: number | null };

/** How full the pinned model's context window is (from the last request's usage), and where compaction triggers. */
export function ContextMeter({ usedTokens, window, compactAt }: Props): JSX.Element {
  const used = usedTokens ?? 0;
  const percent = Math.min(100, (used / window) * 100);
  const triggerPercent = compactAt === null ? undefined : Math.min(100, (compactAt / window) * 100);
  const level =
    triggerPercent !== undefined && percent >= triggerPercent ? 'high' : percent >= 60 ? 'medium' : 'low';
  const description =
    usedTokens === null
      ? `No request yet; window ${formatTokens(window)} tokens`
      : `${formatTokens(used)} of ${formatTokens(window)} tokens used (${Math.round(percent)}%)`;
  const trigger =
    compactAt === null
      ? 'automatic compaction is off'
      : `compacts at ${formatTokens(compactAt)} (${Math.round(triggerPercent ?? 0)}%)`;
  return (
    <div className="context-meter" title={`${description}; ${trigger}`}>
      <span className="context-label">Context</span>
      <div
        className={`meter meter-${level}`}
        role="meter"
        aria-label="Context window used"
        aria-valuemin={0}
        aria-valuemax={window}
        aria-valuenow={used}
        aria-valuetext={`${description}; ${trigger}`}
      >
        <div className="meter-fill" style={{ width: `${percent}%` }} />
        {triggerPercent !== undefined ? (
          <div className="meter-trigger" style={{ left: `${triggerPercent}%` }} aria-hidden="true" />
        ) : null}
      </div>
      <span className="context-value">
        {usedTokens === null ? '—' : `${formatTokens(used)} / ${formatTokens(window)}`}
      </span>
    </div>
  );
}
