import { memo, type JSX } from 'react';
import { Markdown } from '../../../components/Markdown.js';
import { useLiveReply, type LiveReplyStore } from '../liveReply.js';
import { ReasoningBlock } from './MessageBubbles.js';
import { splitSettledMarkdown } from '../transcriptItems.js';

/** The reply being streamed: finished blocks keep their rendering, only the last block re-renders per delta. */
export const LiveBubble = memo(function LiveBubble({ store }: { store: LiveReplyStore }): JSX.Element {
  const live = useLiveReply(store);
  const { settled, tail } = splitSettledMarkdown(live?.text ?? '');
  return (
    <article className="bubble bubble-assistant is-live" aria-label="Assistant (writing)" aria-busy="true">
      <header className="bubble-meta">
        <span className="bubble-author">Assistant</span>
        <span className="typing" aria-hidden="true">
          <span />
          <span />
          <span />
        </span>
      </header>
      {live && live.reasoning !== '' ? (
        <ReasoningBlock text={live.reasoning} live={live.text === '' && live.toolCalls.length === 0} />
      ) : null}
      <div className="live-text" data-testid="live-text">
        {settled.map((block, index) => (
          <Markdown key={index} text={block} />
        ))}
        {tail ? <Markdown text={tail} mode="live" /> : null}
        {!live || (live.text === '' && live.reasoning === '' && live.toolCalls.length === 0) ? (
          <p className="muted">Thinking…</p>
        ) : null}
      </div>
      {live && live.toolCalls.length > 0 ? (
        <ul className="live-tools" aria-label="Tool calls being prepared">
          {live.toolCalls.map((toolCall) => (
            <li key={toolCall.id}>
              Preparing <code>{toolCall.name}</code>…
            </li>
          ))}
        </ul>
      ) : null}
    </article>
  );
});
