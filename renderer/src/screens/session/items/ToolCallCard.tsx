import { memo, useContext, type JSX } from 'react';
import { AppContext } from '../../../appContext.js';
import { formatClock, plural, truncateText } from '../../../lib/format.js';
import { useTerminalLink } from '../../terminal/terminalLink.js';
import { parsePlanArguments } from '../plan.js';
import { PlanSteps } from '../PlanChecklist.js';
import type { ToolItem, ToolStatus } from '../transcriptItems.js';
import { CallArguments } from './CallArguments.js';
import { callView, formatDuration, outputForPeople } from './toolCallView.js';
import { ToolImages } from './ToolImages.js';

const STATUS_LABELS: Record<ToolStatus, string> = {
  requested: 'Queued',
  awaiting_approval: 'Awaiting approval',
  denied: 'Denied',
  running: 'Running',
  succeeded: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const SHOWN_RESULT = 20_000;
/** A command's output up to this many lines is shown open, as a terminal would. */
const OPEN_OUTPUT_LINES = 12;

/** A tool call: name, arguments, status, its approval decision and a collapsible result (or live output while it runs). */
export const ToolCallCard = memo(function ToolCallCard({
  item,
  liveOutput,
  sessionRunning,
  sessionId,
}: {
  item: ToolItem;
  liveOutput: string | undefined;
  sessionRunning: boolean;
  /** Where the result's images are read from; without it (a card outside a session) they are not shown. */
  sessionId?: string | undefined;
}): JSX.Element {
  // A call left "running" by a turn that is no longer running has an unknown outcome until resume decides it.
  const status: ToolStatus | 'unknown' =
    item.status === 'running' && !sessionRunning ? 'unknown' : item.status;
  const label = status === 'unknown' ? 'Outcome unknown' : STATUS_LABELS[status];
  const view = callView(item.name, item.arguments);
  // A todo call shows the plan it sent as a checklist; anything that is not a plan shows as JSON.
  const plan = item.name === 'todo' ? parsePlanArguments(item.arguments) : undefined;
  const result = item.result
    ? truncateText(
        view.kind === 'command' ? outputForPeople(item.result.content) : item.result.content,
        SHOWN_RESULT,
      )
    : undefined;
  const outputLines = lineCount(item.result?.content ?? '');
  const terminal = useTerminalLink();
  const inTerminal = terminal?.showing.has(item.toolCallId) ?? false;
  // Optional: a card rendered outside the app (a test) offers no navigation.
  const navigate = useContext(AppContext)?.navigate;
  const subagent = item.subagent;
  const answer = item.subagentResult ? truncateText(item.subagentResult.content, SHOWN_RESULT) : undefined;
  return (
    <article className={`tool-card tool-${status}`} aria-label={`Tool call ${item.name}: ${label}`}>
      <header className="tool-header">
        <span className="tool-icon" aria-hidden="true">
          ⚙
        </span>
        <code className="tool-name">{item.name}</code>
        <span className={`tool-status tool-status-${status}`}>{label}</span>
        {item.result?.exitCode !== undefined && item.result.exitCode !== null ? (
          <span className="tool-exit">exit {item.result.exitCode}</span>
        ) : null}
        {item.result?.durationMs !== undefined ? (
          <span className="tool-duration">{formatDuration(item.result.durationMs)}</span>
        ) : null}
        {terminal && item.name === 'run_command' && status !== 'awaiting_approval' && status !== 'denied' ? (
          <button
            type="button"
            className="link-button tool-terminal"
            onClick={() => terminal.openRun(item.toolCallId)}
          >
            {inTerminal ? 'In the terminal' : 'Open in terminal'}
          </button>
        ) : null}
        {subagent && navigate ? (
          <button
            type="button"
            className="link-button tool-subagent-open"
            title={`Subagent session ${subagent.childId}: its transcript, and its commands live while it runs`}
            onClick={() => navigate({ screen: 'session', sessionId: subagent.childId })}
          >
            Open subagent
          </button>
        ) : null}
      </header>
      {plan ? (
        <PlanSteps steps={plan} label="Plan sent" />
      ) : (
        <CallArguments view={view} appliedDiff={item.result?.diff} />
      )}
      {item.decision ? (
        <p className="tool-decision">
          {item.decision.kind === 'approval_granted'
            ? `Allowed (${item.decision.scope}) at ${formatClock(item.decision.at)}`
            : `Denied${item.decision.reason ? `: ${item.decision.reason}` : ''}`}
        </p>
      ) : item.approval && status === 'awaiting_approval' ? (
        <p className="tool-decision">
          Waiting for your decision below{item.approval.reason ? `: ${item.approval.reason}` : ''}.
        </p>
      ) : null}
      {status === 'running' && liveOutput && !inTerminal ? (
        <pre className="tool-output is-live" aria-label="Live output" aria-live="off">
          {liveOutput}
        </pre>
      ) : null}
      {sessionId && item.result?.images?.length ? (
        <ToolImages sessionId={sessionId} tool={item.name} images={item.result.images} />
      ) : null}
      {answer ? (
        <details className="tool-result">
          <summary>
            Subagent answer{item.subagentResult?.outOfBudget ? ' (out of budget)' : ''}
            {item.subagentResult?.truncated ? ' (truncated)' : ''}
          </summary>
          <pre className="tool-output">
            {answer.text}
            {answer.omitted > 0 ? `\n… ${answer.omitted} more characters` : ''}
          </pre>
        </details>
      ) : null}
      {result ? (
        <details className="tool-result" open={view.kind === 'command' && outputLines <= OPEN_OUTPUT_LINES}>
          <summary>
            {resultHeading(view.kind, item.result?.isError === true)} · {plural(outputLines, 'line')}
            {/* Issue #37: the artifact's file name carries an event number; people are told it is kept. */}
            {item.result?.artifact ? ' · whole output kept' : ''}
          </summary>
          <pre className={view.kind === 'command' ? 'tool-output tool-terminal-output' : 'tool-output'}>
            {result.text}
            {result.omitted > 0 ? `\n… ${result.omitted} more characters` : ''}
          </pre>
        </details>
      ) : null}
    </article>
  );
});

/** What a result is called on its card: a command's output, a read's lines, any other tool's answer. */
function resultHeading(kind: string, isError: boolean): string {
  if (kind === 'command') return isError ? 'Output (failed)' : 'Output';
  if (kind === 'read') return isError ? 'Could not read' : 'Lines read';
  return isError ? 'Error result' : 'Result';
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}
