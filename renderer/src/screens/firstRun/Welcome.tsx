import type { JSX } from 'react';
import { useApp } from '../../appContext.js';
import { ShortcutsList } from '../../components/keyboard/ShortcutsList.js';

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
      <ShortcutsList />
    </section>
  );
}
