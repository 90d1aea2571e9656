import { memo, type JSX } from 'react';
import { Markdown } from '../../../components/Markdown.js';
import { formatClock, formatDateTime } from '../../../lib/format.js';

/** What the user sent. */
export const UserBubble = memo(function UserBubble({
  content,
  at,
}: {
  content: string;
  at: string;
}): JSX.Element {
  return (
    <article className="bubble bubble-user" aria-label="You">
      <header className="bubble-meta">
        <span className="bubble-author">You</span>
        <time dateTime={at} title={formatDateTime(at)}>
          {formatClock(at)}
        </time>
      </header>
      <Markdown text={content} mode="deferred" />
    </article>
  );
});

/** The model's reasoning, collapsed under its message: open it to read the thinking or its summary. */
export function ReasoningBlock({ text, live = false }: { text: string; live?: boolean }): JSX.Element {
  return (
    <details className="reasoning" data-testid="reasoning">
      <summary>
        {live ? <span className="spinner" aria-hidden="true" /> : null}
        {live ? 'Thinking…' : 'Thinking'}
      </summary>
      <div className="reasoning-text">{text}</div>
    </details>
  );
}

type AssistantProps = {
  content: string;
  at: string;
  reasoning?: string;
  model?: string;
  interrupted?: { reason?: string };
};

/** A committed assistant reply; a stopped one ends with a mark exactly where the stream was cut. */
export const AssistantBubble = memo(function AssistantBubble({
  content,
  at,
  reasoning,
  model,
  interrupted,
}: AssistantProps): JSX.Element {
  return (
    <article
      className={`bubble bubble-assistant${interrupted ? ' is-interrupted' : ''}`}
      aria-label={interrupted ? 'Assistant (interrupted)' : 'Assistant'}
    >
      <header className="bubble-meta">
        <span className="bubble-author">Assistant</span>
        {model ? <span className="bubble-model">{model}</span> : null}
        <time dateTime={at} title={formatDateTime(at)}>
          {formatClock(at)}
        </time>
      </header>
      {reasoning !== undefined ? <ReasoningBlock text={reasoning} /> : null}
      {content.trim() !== '' ? <Markdown text={content} mode="deferred" /> : null}
      {interrupted ? (
        <p className="cut-mark" role="note">
          <span aria-hidden="true">✂</span> Interrupted here
          {interrupted.reason ? ` (${interrupted.reason})` : ''}
          {content.trim() === '' ? ' before any text arrived' : ''}
        </p>
      ) : null}
    </article>
  );
});
