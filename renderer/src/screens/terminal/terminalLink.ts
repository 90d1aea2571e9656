import { createContext, useContext } from 'react';

/** What the transcript may ask of the session's terminal dock. */
export type TerminalLink = {
  /** Opens the dock on this command run (its live output, or its replay once finished). */
  openRun: (toolCallId: string) => void;
  /** Runs whose terminal is on screen now (the tool card then leaves the live output to it). */
  showing: ReadonlySet<string>;
};

/** Provided by the session view; undefined elsewhere (tool cards then offer no terminal). */
export const TerminalLinkContext = createContext<TerminalLink | undefined>(undefined);

/** The session's terminal dock, if there is one. */
export function useTerminalLink(): TerminalLink | undefined {
  return useContext(TerminalLinkContext);
}
