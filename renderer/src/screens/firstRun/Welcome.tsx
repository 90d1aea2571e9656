import type { JSX } from 'react';
import { useApp } from '../../appContext.js';

/** The main pane when no session is open: what to do next, and the keyboard shortcuts. */
export function Welcome(): JSX.Element {
  const { openNewSession, focusSearch } = useApp();
  return (
    <section className="welcome" aria-labelledby="welcome-title">
      <h1 id="welcome-title">No session open</h1>
      <p>Pick a session on the left, or start a new one on a project folder.</p>
      <div className="welcome-actions">
        <button type="button" className="button-primary" onClick={() => openNewSession()}>
          New session
        </button>
        <button type="button" className="button-secondary" onClick={focusSearch}>
          Search sessions
        </button>
      </div>
      <dl className="shortcuts" aria-label="Keyboard shortcuts">
        <dt>
          <kbd>Ctrl</kbd>/<kbd>⌘</kbd> <kbd>K</kbd>
        </dt>
        <dd>Search sessions</dd>
        <dt>
          <kbd>↑</kbd> <kbd>↓</kbd> <kbd>Enter</kbd>
        </dt>
        <dd>Move through the list and open a session</dd>
        <dt>
          <kbd>Enter</kbd> / <kbd>Shift</kbd> <kbd>Enter</kbd>
        </dt>
        <dd>Send / new line in the message box</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>Stop the running turn</dd>
      </dl>
    </section>
  );
}
