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

type AssistantProps = { content: string; at: string; model?: string; interrupted?: { reason?: string } };

/** A committed assistant reply; a stopped one ends with a mark exactly where the stream was cut. */
export const AssistantBubble = memo(function AssistantBubble({
  content,
  at,
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
