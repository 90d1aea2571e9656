import { useMemo, useRef, useState, type JSX } from 'react';
import { Markdown } from '../../components/Markdown.js';
import { referencedSeqs, summarySections } from './summarySections.js';

/**
 * A compaction's summary as the model reads it, rendered, under the pinned goal kept beside it, with a jump list of its sections and of the
 * replaced events it points to (`#seq`), which scroll the replaced events beside it.
 */
export function SummaryPane({
  summary,
  pinned,
  fromSeq,
  through,
  onShowEvent,
}: {
  summary: string;
  /** The first user message, kept verbatim outside the summary. */
  pinned: string;
  fromSeq: number;
  through: number;
  onShowEvent: (seq: number) => void;
}): JSX.Element {
  const sections = useMemo(() => summarySections(summary), [summary]);
  const references = useMemo(() => referencedSeqs(summary, fromSeq, through), [summary, fromSeq, through]);
  const bodyRef = useRef<HTMLDivElement>(null);
  const [pinnedOpen, setPinnedOpen] = useState(false);
  const longPinned = pinned.length > 300 || pinned.split('\n').length > 3;
  const showSection = (index: number) => {
    const headings = bodyRef.current?.querySelectorAll('h1, h2, h3');
    headings?.[index]?.scrollIntoView({ block: 'start', behavior: 'smooth' });
  };
  return (
    <section className="summary-pane" aria-label="Summary">
      <header className="inspector-pane-header">
        <h3>Summary</h3>
        <span className="muted">what the model reads instead</span>
      </header>
      {sections.length > 0 || references.length > 0 ? (
        <nav className="summary-nav" aria-label="Summary sections">
          {sections.map((section, index) => (
            <button
              key={`${index}-${section.title}`}
              type="button"
              className="chip"
              onClick={() => showSection(index)}
            >
              {section.title}
            </button>
          ))}
          {references.length > 0 ? (
            <span className="summary-refs">
              <span className="muted">Points to</span>
              {references.slice(0, 40).map((seq) => (
                <button
                  key={seq}
                  type="button"
                  className="chip chip-seq"
                  onClick={() => onShowEvent(seq)}
                  aria-label={`Show event ${seq}`}
                >
                  #{seq}
                </button>
              ))}
            </span>
          ) : null}
        </nav>
      ) : null}
      <div className="summary-body" ref={bodyRef} tabIndex={0} aria-label="Summary text">
        <figure className={`pinned-goal${pinnedOpen ? ' is-open' : ''}`}>
          <figcaption>
            Pinned goal{' '}
            <span className="muted">— the first user message, kept verbatim beside the summary</span>
            {longPinned ? (
              <button type="button" className="link-button" onClick={() => setPinnedOpen((open) => !open)}>
                {pinnedOpen ? 'Less' : 'All of it'}
              </button>
            ) : null}
          </figcaption>
          <blockquote data-testid="pinned-goal">{pinned}</blockquote>
        </figure>
        <Markdown text={summary} />
      </div>
    </section>
  );
}
