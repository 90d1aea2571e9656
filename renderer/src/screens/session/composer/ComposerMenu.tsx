import type { JSX } from 'react';

/** One entry of a composer menu: what is inserted or run, how it reads, and a quieter line beside it. */
export type MenuEntry = { key: string; label: string; detail?: string | undefined; tag?: string | undefined };

/**
 * The popup above the composer for `/` commands and `@` mentions: a listbox whose active option follows ↑/↓ (the
 * text box keeps focus and aria-activedescendant names the option); a click chooses.
 */
export function ComposerMenu({
  id,
  label,
  entries,
  active,
  empty,
  onChoose,
  onHover,
}: {
  id: string;
  label: string;
  entries: readonly MenuEntry[];
  active: number;
  /** Said when nothing matches (the menu stays, so the user sees why nothing completes). */
  empty: string;
  onChoose: (index: number) => void;
  onHover: (index: number) => void;
}): JSX.Element {
  return (
    <div className="composer-menu">
      {entries.length === 0 ? (
        <p className="composer-menu-empty">{empty}</p>
      ) : (
        <ul id={id} role="listbox" aria-label={label}>
          {entries.map((entry, index) => (
            <li
              key={entry.key}
              id={`${id}-${index}`}
              role="option"
              aria-selected={index === active}
              className={index === active ? 'is-active' : undefined}
              // Chosen on mouse down: a click would first blur the text box and close the menu.
              onMouseDown={(event) => {
                event.preventDefault();
                onChoose(index);
              }}
              onMouseMove={() => index !== active && onHover(index)}
            >
              <span className="composer-menu-label">{entry.label}</span>
              {entry.detail ? <span className="composer-menu-detail">{entry.detail}</span> : null}
              {entry.tag ? <span className="tag">{entry.tag}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
