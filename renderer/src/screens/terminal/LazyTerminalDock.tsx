import './terminal.css';
import { memo, useEffect, useState, type ComponentProps, type JSX } from 'react';
import { ErrorState, LoadingState } from '../../components/States.js';
import type * as DockModule from './TerminalDock.js';

// xterm.js is the largest piece of the session view: it is fetched the first time a terminal opens.
let loadedModule: typeof DockModule | undefined;
const loadDock = async () => (loadedModule ??= await import('./TerminalDock.js'));

/** The terminal dock once its code (xterm.js included) is loaded; at once when it already is. */
export const LazyTerminalDock = memo(function LazyTerminalDock(
  props: ComponentProps<typeof DockModule.TerminalDock>,
): JSX.Element {
  const [loaded, setLoaded] = useState(loadedModule);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!loaded) loadDock().then(setLoaded, () => setFailed(true));
  }, [loaded]);
  if (loaded) return <loaded.TerminalDock {...props} />;
  return (
    <section className="terminal-dock" aria-label="Terminals">
      {failed ? (
        <ErrorState message="The terminal could not be loaded. Reload the window." />
      ) : (
        <LoadingState label="Loading the terminal…" />
      )}
    </section>
  );
});
