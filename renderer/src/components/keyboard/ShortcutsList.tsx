import { Fragment, type JSX } from 'react';
import { SHORTCUTS } from './shortcuts.js';

/** The shortcuts as a definition list (the `?` sheet and the empty pane). */
export function ShortcutsList(): JSX.Element {
  return (
    <dl className="shortcuts" aria-label="Keyboard shortcuts">
      {SHORTCUTS.map((shortcut) => (
        <Fragment key={shortcut.what}>
          <dt>
            {shortcut.keys.map((combo, index) => (
              <Fragment key={combo.join('+')}>
                {index > 0 ? ' / ' : null}
                {combo.map((key, at) => (
                  <Fragment key={key}>
                    {at > 0 ? ' ' : null}
                    <kbd>{key}</kbd>
                  </Fragment>
                ))}
              </Fragment>
            ))}
          </dt>
          <dd>{shortcut.what}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
