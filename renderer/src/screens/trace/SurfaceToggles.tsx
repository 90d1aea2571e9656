import './trace.css';
import type { JSX, ReactNode } from 'react';
import { InspectorLinkContext } from '../inspector/inspectorLink.js';
import { TerminalLinkContext, type TerminalLink } from '../terminal/terminalLink.js';

/** The session surfaces these toggles switch: the main pane's inspector or trace, and the terminal dock. */
export type MainSurface = 'transcript' | 'compactions' | 'trace';

/**
 * The session header's toggles for the compaction inspector, the trace and cost view (each replaces the
 * transcript while on) and the terminal dock (below the transcript). Pressed state is announced.
 */
export function SurfaceToggles({
  surface,
  onSurface,
  compactions,
  terminalOpen,
  commandRunning,
  backgroundRunning = 0,
  onTerminal,
}: {
  surface: MainSurface;
  onSurface: (surface: MainSurface) => void;
  /** How many compactions the loaded transcript holds. */
  compactions: number;
  terminalOpen: boolean;
  /** A command of this session runs now (the Terminal toggle pulses). */
  commandRunning: boolean;
  /** Issue #32: background commands running now, counted on the toggle while the dock is closed. */
  backgroundRunning?: number;
  onTerminal: () => void;
}): JSX.Element {
  const toggle = (target: MainSurface) => onSurface(surface === target ? 'transcript' : target);
  // The open dock lists them itself.
  const shownBackground = terminalOpen ? 0 : backgroundRunning;
  return (
    <span className="surface-toggles">
      <button
        type="button"
        className={`surface-toggle${surface === 'compactions' ? ' is-open' : ''}`}
        aria-pressed={surface === 'compactions'}
        onClick={() => toggle('compactions')}
      >
        Compactions
        {compactions > 0 ? <span className="surface-toggle-count">{compactions}</span> : null}
      </button>
      <button
        type="button"
        className={`surface-toggle${surface === 'trace' ? ' is-open' : ''}`}
        aria-pressed={surface === 'trace'}
        onClick={() => toggle('trace')}
      >
        Trace
      </button>
      <button
        type="button"
        className={`surface-toggle${terminalOpen ? ' is-open' : ''}`}
        aria-pressed={terminalOpen}
        {...(shownBackground > 0
          ? {
              'aria-label': `Terminal: ${shownBackground} background command${shownBackground === 1 ? '' : 's'} running`,
              title: `${shownBackground} background command${shownBackground === 1 ? '' : 's'} running: open the terminal to see or stop ${shownBackground === 1 ? 'it' : 'them'}`,
            }
          : {})}
        onClick={onTerminal}
      >
        {commandRunning ? <span className="pulse" aria-hidden="true" /> : null}
        Terminal
        {shownBackground > 0 ? (
          <span className="surface-toggle-count" data-testid="background-count" aria-hidden="true">
            {shownBackground}
          </span>
        ) : null}
      </button>
    </span>
  );
}

/** Gives the transcript's rows their links: compaction markers to the inspector, command cards to the terminal dock. */
export function SurfaceLinks({
  inspector,
  terminal,
  children,
}: {
  inspector: (seq: number) => void;
  terminal: TerminalLink;
  children: ReactNode;
}): JSX.Element {
  return (
    <InspectorLinkContext.Provider value={inspector}>
      <TerminalLinkContext.Provider value={terminal}>{children}</TerminalLinkContext.Provider>
    </InspectorLinkContext.Provider>
  );
}
