import { useSyncExternalStore } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { ProviderKind } from '../../api/types.js';
import { useQuery, type QueryState } from '../../api/useQuery.js';
import type { Catalogue } from './modelLifecycle.js';

/*
 * The catalogue, shared by every dialog and header of the window: read once, then each hosted provider's
 * models list is refreshed in the background when it is missing or stale (main caches it in the home and
 * judges its age by its clock), and the catalogue is read again so lists, badges and ages follow the
 * provider's word.
 */

const HOSTED: readonly ProviderKind[] = ['anthropic', 'openai'];

let pending: Promise<Catalogue> | undefined;
let version = 0;
let refreshedOnce = false;
const listeners = new Set<() => void>();
/** Why the last refresh of a provider's list failed (no key, offline), until one succeeds. */
const failures = new Map<ProviderKind, string>();

function changed() {
  pending = undefined;
  version++;
  for (const listener of listeners) listener();
}

/** Reads a provider's models endpoint now (through main) and re-reads the catalogue; never throws. */
export async function refreshModels(provider: ProviderKind): Promise<void> {
  try {
    await call(keel().providers.refreshModels({ provider }));
    failures.delete(provider);
  } catch (error) {
    failures.set(provider, describeError(error));
  }
  changed();
}

function refreshStale(catalogue: Catalogue) {
  // Main says how old each list is by its clock: the page's clock judges nothing.
  const stale = HOSTED.filter((provider) => {
    const list = catalogue.served.find((entry) => entry.provider === provider);
    return list === undefined || list.stale;
  });
  void Promise.all(stale.map((provider) => refreshModels(provider)));
}

function readCatalogue(): Promise<Catalogue> {
  pending ??= call(keel().providers.catalogue()).then(
    (catalogue) => {
      if (!refreshedOnce) {
        refreshedOnce = true;
        refreshStale(catalogue);
      }
      return catalogue;
    },
    (error: unknown) => {
      pending = undefined;
      throw error;
    },
  );
  return pending;
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** The model catalogue (lifecycle, suggestions, the providers' lists), shared by every caller. */
export function useCatalogue(): QueryState<Catalogue> {
  const current = useSyncExternalStore(subscribe, () => version);
  return useQuery(readCatalogue, [current]);
}

/** Why a provider's list could not be read, when the last try failed. */
export function modelsListFailure(provider: ProviderKind): string | undefined {
  return failures.get(provider);
}
