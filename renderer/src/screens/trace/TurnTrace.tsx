import { useState, type JSX } from 'react';
import type { SubagentTrace, TimelineStage, TurnTraceSummary } from '../../../../main/ipc/contract.js';
import { TimelineChart, type TimelineBar } from '../../components/charts/TimelineChart.js';
import { formatDateTime, formatTokens, plural } from '../../lib/format.js';
import { costNote, formatCostKnown, formatDuration, stageDetail, stageLabel } from './traceFormat.js';

/** One turn: a header line (prompt, time, tokens, cost, counts) that expands into its timeline, tokens and subagents. */
export function TurnTrace({
  turn,
  expanded,
  onToggle,
  onOpenSession,
  depth = 0,
}: {
  turn: TurnTraceSummary;
  expanded: boolean;
  onToggle: () => void;
  onOpenSession: (sessionId: string) => void;
  depth?: number;
}): JSX.Element {
  const tokens = turn.inputTokens + turn.outputTokens + turn.cacheReadTokens + turn.cacheWriteTokens;
  const bodyId = `turn-trace-${depth}-${turn.turn}-${turn.startedAt}`;
  return (
    <article
      className={`turn-trace${expanded ? ' is-expanded' : ''}`}
      aria-label={`Turn ${turn.turn}`}
      data-turn={turn.turn}
    >
      <button
        type="button"
        className="turn-trace-header"
        aria-expanded={expanded}
        aria-controls={bodyId}
        onClick={onToggle}
      >
        <span className="turn-trace-caret" aria-hidden="true">
          {expanded ? '▾' : '▸'}
        </span>
        <span className="turn-trace-number">Turn {turn.turn}</span>
        <span className="turn-trace-prompt">
          {turn.prompt ?? (turn.turn === 0 ? 'Before the first prompt' : '')}
        </span>
        <span className="turn-trace-figures">
          <span title="Duration">{formatDuration(turn.durationMs)}</span>
          <span title="Tokens">{formatTokens(tokens)} tok</span>
          <span title={costNote(turn.costKnown) ?? 'Cost'}>
            {formatCostKnown(turn.costUsd, turn.costKnown)}
          </span>
        </span>
      </button>
      <p className="turn-trace-tags">
        <span className="tag">{plural(turn.requests, 'request')}</span>
        {turn.tools > 0 ? <span className="tag">{plural(turn.tools, 'tool call')}</span> : null}
        {turn.retries > 0 ? <span className="tag tag-warning">{plural(turn.retries, 'retry')}</span> : null}
        {turn.compactions > 0 ? <span className="tag">{plural(turn.compactions, 'compaction')}</span> : null}
        {turn.approvalWaitMs > 0 ? (
          <span className="tag tag-warning">approval wait {formatDuration(turn.approvalWaitMs)}</span>
        ) : null}
        {turn.subagents.length > 0 ? (
          <span className="tag">{plural(turn.subagents.length, 'subagent')}</span>
        ) : null}
      </p>
      {expanded ? (
        <div className="turn-trace-body" id={bodyId}>
          <TurnTokens turn={turn} />
          {turn.stages.length > 0 ? (
            <TimelineChart
              bars={turn.stages.map(toBar)}
              totalMs={turn.durationMs}
              formatDuration={formatDuration}
              label={`Timeline of turn ${turn.turn}`}
            />
          ) : (
            <p className="muted">
              No stages were traced for this turn (an imported session, or one recorded before tracing).
            </p>
          )}
          {turn.subagents.length > 0 ? (
            <SubagentList subagents={turn.subagents} depth={depth + 1} onOpenSession={onOpenSession} />
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

function TurnTokens({ turn }: { turn: TurnTraceSummary }): JSX.Element {
  return (
    <table className="turn-tokens">
      <caption className="visually-hidden">Tokens and cost of turn {turn.turn}</caption>
      <thead>
        <tr>
          <th scope="col">Input</th>
          <th scope="col">Output</th>
          <th scope="col">Cache read</th>
          <th scope="col">Cache write</th>
          <th scope="col">Cost</th>
          <th scope="col">Started</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <td>{turn.inputTokens.toLocaleString()}</td>
          <td>{turn.outputTokens.toLocaleString()}</td>
          <td>{turn.cacheReadTokens.toLocaleString()}</td>
          <td>{turn.cacheWriteTokens.toLocaleString()}</td>
          <td title={costNote(turn.costKnown)}>{formatCostKnown(turn.costUsd, turn.costKnown)}</td>
          <td>{formatDateTime(turn.startedAt)}</td>
        </tr>
      </tbody>
    </table>
  );
}

function toBar(stage: TimelineStage, index: number): TimelineBar {
  const label = stageLabel(stage);
  const detail = stageDetail(stage);
  return {
    key: `${index}-${stage.name}-${stage.startOffsetMs}`,
    label,
    kind: stage.kind,
    startMs: stage.startOffsetMs,
    durationMs: stage.durationMs,
    open: stage.pending === true,
    title: `${label}: ${formatDuration(stage.durationMs)} from ${formatDuration(stage.startOffsetMs)}${
      stage.toolCallId ? ` · call ${stage.toolCallId}` : ''
    }${detail ? ` · ${detail}` : ''}`,
  };
}

const MISSING: Record<NonNullable<SubagentTrace['missing']>, string> = {
  not_found: 'its log was not found',
  depth_limit: 'nested too deep to show here; open it to see its trace',
  cycle: 'it refers back to a session above it',
};

/** The subagents a turn spawned, each with its own totals and turns (nested again), openable as its own session. */
export function SubagentList({
  subagents,
  depth,
  onOpenSession,
}: {
  subagents: readonly SubagentTrace[];
  depth: number;
  onOpenSession: (sessionId: string) => void;
}): JSX.Element {
  return (
    <ul className="subagent-traces" aria-label="Subagents">
      {subagents.map((subagent) => (
        <li key={subagent.childId} className="subagent-trace">
          <SubagentTraceCard subagent={subagent} depth={depth} onOpenSession={onOpenSession} />
        </li>
      ))}
    </ul>
  );
}

function SubagentTraceCard({
  subagent,
  depth,
  onOpenSession,
}: {
  subagent: SubagentTrace;
  depth: number;
  onOpenSession: (sessionId: string) => void;
}): JSX.Element {
  const summary = subagent.summary;
  const status = subagent.outOfBudget ? 'out of budget' : subagent.finished ? 'finished' : 'running';
  return (
    <details className="subagent-trace-card">
      <summary>
        <span className="subagent-trace-title">Subagent: {subagent.task}</span>
        <span className={`tag${subagent.outOfBudget ? ' tag-warning' : subagent.finished ? ' tag-ok' : ''}`}>
          {status}
        </span>
        {summary ? (
          <span className="subagent-trace-figures">
            {plural(summary.totals.turns, 'turn')} · {formatDuration(summary.totals.durationMs)} ·{' '}
            {formatCostKnown(summary.totalsWithSubagents.costUsd, summary.totalsWithSubagents.costKnown)}
          </span>
        ) : null}
        <button
          type="button"
          className="link-button"
          onClick={(event) => {
            event.preventDefault();
            onOpenSession(subagent.childId);
          }}
          disabled={subagent.missing === 'not_found'}
        >
          Open session
        </button>
      </summary>
      {summary ? (
        <div className="subagent-trace-turns">
          {summary.turns.map((turn) => (
            <NestedTurn key={turn.turn} turn={turn} depth={depth} onOpenSession={onOpenSession} />
          ))}
        </div>
      ) : (
        <p className="muted">Not nested here: {MISSING[subagent.missing ?? 'not_found']}.</p>
      )}
    </details>
  );
}

/** A subagent's turn: collapsed like the parent's, with its own expand state. */
function NestedTurn({
  turn,
  depth,
  onOpenSession,
}: {
  turn: TurnTraceSummary;
  depth: number;
  onOpenSession: (sessionId: string) => void;
}): JSX.Element {
  const [expanded, setExpanded] = useState(false);
  return (
    <TurnTrace
      turn={turn}
      expanded={expanded}
      onToggle={() => setExpanded((value) => !value)}
      onOpenSession={onOpenSession}
      depth={depth}
    />
  );
}
