import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery, type QueryState } from '../../api/useQuery.js';
import type { Catalogue } from './modelLifecycle.js';

// The catalogue is fixed for the life of main: one read serves every dialog and header (a failed read is retried).
let pending: Promise<Catalogue> | undefined;

function readCatalogue(): Promise<Catalogue> {
  pending ??= call(keel().providers.catalogue()).catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

/** The model catalogue (lifecycle, suggestions), read once per window and shared by every caller. */
export function useCatalogue(): QueryState<Catalogue> {
  return useQuery(readCatalogue, []);
}
