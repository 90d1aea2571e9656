import { memo, useDeferredValue, type JSX, type ReactElement } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import rehypeHighlight from 'rehype-highlight';
import remarkGfm from 'remark-gfm';

// react-markdown builds a processor per render, and rehype-highlight registers its 37 languages on every
// attach: attaching one prepared transformer instead keeps that to once per page.
const highlight = rehypeHighlight();
const remarkPlugins = [remarkGfm];
const rehypePlugins = [() => highlight];

// Links leave the app: a new browsing context, which Electron's window-open handler turns into a confirmed external open.
const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  ),
};

/** Rendered trees of recent texts: scrolling back to a message reuses its parse and highlighting. */
const rendered = new Map<string, ReactElement>();
const CACHE_LIMIT = 500;

function renderMarkdown(text: string, cache: boolean): ReactElement {
  const hit = rendered.get(text);
  if (hit) {
    rendered.delete(text);
    rendered.set(text, hit);
    return hit;
  }
  // react-markdown's sync component is a pure function of its props, so its element tree can be kept.
  const element = ReactMarkdown({ children: text, remarkPlugins, rehypePlugins, components });
  if (cache) {
    rendered.set(text, element);
    if (rendered.size > CACHE_LIMIT) rendered.delete(rendered.keys().next().value as string);
  }
  return element;
}

/**
 * How a text is rendered: `deferred` (transcript rows) shows plain text first and parses in an
 * interruptible background render, so fast scrolling never waits on Markdown; `live` (the streaming
 * tail) parses every time and keeps nothing; `sync` parses now and caches.
 */
export type MarkdownMode = 'sync' | 'deferred' | 'live';

/** Renders model or user Markdown (GFM, highlighted code); raw HTML stays text. Re-renders only when the text changes. */
export const Markdown = memo(function Markdown({
  text,
  mode = 'sync',
}: {
  text: string;
  mode?: MarkdownMode;
}): JSX.Element {
  const ready = useDeferredValue(true, mode !== 'deferred' || rendered.has(text));
  return (
    <div className={ready ? 'markdown' : 'markdown markdown-plain'}>
      {ready ? renderMarkdown(text, mode !== 'live') : text}
    </div>
  );
});
