import { createContext, useContext } from 'react';

/**
 * Opens the compaction inspector of the current session at compaction `seq`; provided by the session view,
 * used by the transcript's compaction markers. Undefined outside a session view (no link is shown).
 */
export const InspectorLinkContext = createContext<((seq: number) => void) | undefined>(undefined);

/** The session view's "open this compaction in the inspector", if there is one. */
export function useInspectorLink(): ((seq: number) => void) | undefined {
  return useContext(InspectorLinkContext);
}
