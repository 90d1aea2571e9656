import type { JSX } from 'react';
import type { SessionTraceSummary } from '../../../../main/ipc/contract.js';
import { ShareMeter } from '../../components/charts/ShareMeter.js';
import { formatTokens } from '../../lib/format.js';
import { costNote, formatCostKnown, formatDuration, formatPercent } from './traceFormat.js';

/** The session's totals: cost (with subagents), tokens by kind, cache hit rate, turns, time and approval waits. */
export function TraceTotals({ summary }: { summary: SessionTraceSummary }): JSX.Element {
  const { totals, totalsWithSubagents } = summary;
  const tokens = totals.inputTokens + totals.outputTokens + totals.cacheReadTokens + totals.cacheWriteTokens;
  const withSubagents =
    totalsWithSubagents.costUsd !== totals.costUsd ||
    totalsWithSubagents.inputTokens !== totals.inputTokens ||
    totalsWithSubagents.outputTokens !== totals.outputTokens;
  const waitShare = totals.durationMs > 0 ? totals.approvalWaitMs / totals.durationMs : null;
  return (
    <dl className="trace-totals" aria-label="Session totals">
      <div className="trace-total">
        <dt>Cost</dt>
        <dd className="trace-total-value" data-testid="trace-cost" title={costNote(totals.costKnown)}>
          {formatCostKnown(totals.costUsd, totals.costKnown)}
        </dd>
        <dd className="trace-total-note">
          {withSubagents
            ? `with subagents: ${formatCostKnown(totalsWithSubagents.costUsd, totalsWithSubagents.costKnown)}`
            : summary.model}
        </dd>
      </div>
      <div className="trace-total">
        <dt>Tokens</dt>
        <dd className="trace-total-value" data-testid="trace-tokens">
          {formatTokens(tokens)}
        </dd>
        <dd className="trace-total-note">
          in {formatTokens(totals.inputTokens)} · out {formatTokens(totals.outputTokens)}
          {totals.reasoningTokens ? ` (reasoning ${formatTokens(totals.reasoningTokens)})` : ''} · cache read{' '}
          {formatTokens(totals.cacheReadTokens)} · cache write {formatTokens(totals.cacheWriteTokens)}
        </dd>
      </div>
      <div className="trace-total">
        <dt>Cache hit rate</dt>
        <dd className="trace-total-value">{formatPercent(totals.cacheHitRate)}</dd>
        <dd className="trace-total-note">
          <ShareMeter share={totals.cacheHitRate} label="Cache hit rate" />
        </dd>
      </div>
      <div className="trace-total">
        <dt>Turns</dt>
        <dd className="trace-total-value">{totals.turns}</dd>
        <dd className="trace-total-note">{totals.requests} model requests</dd>
      </div>
      <div className="trace-total">
        <dt>Time</dt>
        <dd className="trace-total-value">{formatDuration(totals.durationMs)}</dd>
        <dd className="trace-total-note">summed over turns</dd>
      </div>
      <div className="trace-total">
        <dt>Waiting for approvals</dt>
        <dd className="trace-total-value" data-testid="trace-approval-wait">
          {formatDuration(totals.approvalWaitMs)}
        </dd>
        <dd className="trace-total-note">
          {waitShare === null ? 'no time traced yet' : `${formatPercent(waitShare)} of the time`}
        </dd>
      </div>
    </dl>
  );
}
