import { useState, type JSX } from 'react';
import type { CompactionSummary } from '../../../../main/ipc/contract.js';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { ErrorState, LoadingState } from '../../components/States.js';
import { formatDateTime, formatTokens } from '../../lib/format.js';
import { RebuildView } from './RebuildView.js';
import { ReplacedEvents, type FocusRequest } from './ReplacedEvents.js';
import { SummaryPane } from './SummaryPane.js';

type Tab = 'events' | 'rebuild';

/**
 * One compaction in full: status, range, tokens before and after, model, then either its summary (with the
 * pinned goal) beside the events it replaced, or the payload rebuilt without it.
 */
export function CompactionDetail({
  sessionId,
  entry,
  version,
  onSelect,
}: {
  sessionId: string;
  entry: CompactionSummary;
  /** Bumped when the session's compactions change, so the rebuilt payload is read again. */
  version: number;
  onSelect: (seq: number) => void;
}): JSX.Element {
  const inspected = useQuery(
    () => call(keel().compactions.inspect({ sessionId, seq: entry.seq })),
    [sessionId, entry.seq],
  );
  const [tab, setTab] = useState<Tab>('events');
  const [focus, setFocus] = useState<FocusRequest | undefined>();

  if (inspected.error) return <ErrorState message={inspected.error} onRetry={inspected.reload} />;
  const data = inspected.data;
  if (!data) return <LoadingState label={`Reading compaction #${entry.seq}…`} />;
  const { compaction, replacedCount } = data;
  const saved =
    entry.tokensBefore !== undefined && entry.tokensAfter !== undefined && entry.tokensBefore > 0
      ? 1 - entry.tokensAfter / entry.tokensBefore
      : undefined;

  return (
    <div className="compaction-detail">
      <div className="compaction-facts">
        <h2 className="compaction-title">
          Compaction #{entry.seq}{' '}
          {entry.status === 'in_effect' ? (
            <span className="tag tag-ok">in effect</span>
          ) : (
            <span className="tag tag-warning">superseded</span>
          )}
        </h2>
        <dl className="compaction-meta">
          <div>
            <dt>Replaces</dt>
            <dd>
              events #{entry.fromSeq}–#{entry.through} ({replacedCount.toLocaleString()} events)
            </dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd data-testid="compaction-tokens">
              {entry.tokensBefore !== undefined ? formatTokens(entry.tokensBefore) : '?'} →{' '}
              {entry.tokensAfter !== undefined ? formatTokens(entry.tokensAfter) : '?'}
              {saved !== undefined ? ` (−${Math.round(saved * 100)}%)` : ''}
            </dd>
          </div>
          <div>
            <dt>Written by</dt>
            <dd>{entry.model ?? 'unknown model'}</dd>
          </div>
          <div>
            <dt>At</dt>
            <dd>{formatDateTime(entry.at)}</dd>
          </div>
          {entry.supersedes !== undefined ? (
            <div>
              <dt>Re-runs</dt>
              <dd>
                <button type="button" className="link-button" onClick={() => onSelect(entry.supersedes!)}>
                  compaction #{entry.supersedes}
                </button>
              </dd>
            </div>
          ) : null}
          {entry.supersededBy !== undefined ? (
            <div>
              <dt>Superseded by</dt>
              <dd>
                <button type="button" className="link-button" onClick={() => onSelect(entry.supersededBy!)}>
                  compaction #{entry.supersededBy}
                </button>
              </dd>
            </div>
          ) : null}
        </dl>
      </div>
      <div className="inspector-tabs" role="tablist" aria-label="Compaction views">
        <button
          type="button"
          role="tab"
          aria-selected={tab === 'events'}
          className={tab === 'events' ? 'is-current' : ''}
          onClick={() => setTab('events')}
        >
          Summary and replaced events
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={tab === 'rebuild'}
          className={tab === 'rebuild' ? 'is-current' : ''}
          onClick={() => setTab('rebuild')}
        >
          Rebuild without it
        </button>
      </div>
      {tab === 'events' ? (
        <div className="inspector-split" role="tabpanel" aria-label="Summary and replaced events">
          <ReplacedEvents
            sessionId={sessionId}
            fromSeq={entry.fromSeq}
            through={entry.through}
            expected={replacedCount}
            focus={focus}
          />
          <SummaryPane
            summary={compaction.summary}
            pinned={compaction.pinned}
            fromSeq={entry.fromSeq}
            through={entry.through}
            onShowEvent={(seq) => setFocus({ seq, nonce: Date.now() })}
          />
        </div>
      ) : (
        <div className="inspector-rebuild" role="tabpanel" aria-label="Rebuild without it">
          <RebuildView sessionId={sessionId} seq={entry.seq} version={version} />
        </div>
      )}
    </div>
  );
}
