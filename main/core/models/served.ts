import type { Clock } from '../../common/clock.js';
import type { ServedModel, ServedModelList } from '../../common/models.js';
import type { ProviderKind } from '../../common/events.js';
import {
  checkServedModel,
  isSnapshotOf,
  listServedModels,
  ProviderError,
  providerKey,
  type ProviderKeys,
} from '../../providers/index.js';
import { readServedModelList, writeServedModelList } from '../../store/servedModels.js';

/** A cached list older than this is read again before a model is chosen (the app refreshes in the background). */
export const SERVED_LIST_MAX_AGE_MS = 60 * 60 * 1000;

/** What a host passes so Keel can ask providers about their models. */
export type ServedContext = {
  home: string;
  clock: Clock;
  keys: ProviderKeys;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  timeoutMs?: number;
};

/** Reads the endpoint's list now and caches it; throws the endpoint's ProviderError. */
export async function refreshServedModels(
  provider: ProviderKind,
  baseUrl: string | undefined,
  context: ServedContext,
): Promise<ServedModelList> {
  if (provider === 'local')
    throw new ProviderError('bad_request', 'a local model is a file Keel runs, not a served list');
  const models = await listServedModels(
    {
      provider,
      ...(baseUrl ? { baseUrl } : {}),
      apiKey: providerKey(provider, context.keys, context.env, baseUrl),
    },
    {
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.timeoutMs ? { timeoutMs: context.timeoutMs } : {}),
    },
  );
  const list: ServedModelList = {
    provider,
    ...(baseUrl ? { baseUrl } : {}),
    fetchedAt: context.clock.now().toISOString(),
    models,
  };
  writeServedModelList(context.home, list);
  return list;
}

/** The entry of `model` in a served list: the id itself, a dated snapshot of it, or the alias it snapshots. */
export function findServed(list: ServedModelList, model: string): ServedModel | undefined {
  return list.models.find((served) => isSnapshotOf(served.id, model) || isSnapshotOf(model, served.id));
}

/** "just now", "5 min ago", "3 h ago", "2 days ago": how old a list is, for a person. */
export function describeAge(fetchedAt: string, clock: Clock): string {
  const ms = Math.max(0, clock.now().getTime() - Date.parse(fetchedAt));
  if (ms < 60_000) return 'just now';
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)} h ago`;
  const days = Math.floor(ms / 86_400_000);
  return `${days} day${days === 1 ? '' : 's'} ago`;
}

/**
 * What the provider says of one model:
 * - `listed`: its models endpoint lists it (or answers for it by id), so it is served, whatever a built-in
 *   date says;
 * - `not_served`: the endpoint answered and does not serve it; `message` is the provider's own error;
 * - `unknown`: the endpoint could not be asked (no key, offline, timed out); `reason` says why.
 * A fresh cached list is used as it is; a stale one is read again, and kept when that read fails.
 */
export type ServedStatus =
  | { kind: 'listed'; list: ServedModelList; model: ServedModel }
  | { kind: 'not_served'; list: ServedModelList; message: string }
  | { kind: 'unknown'; reason: string; list?: ServedModelList };

/** Asks the provider (through the cache) whether it serves `model`; never throws for provider failures. */
export async function servedStatus(
  provider: ProviderKind,
  baseUrl: string | undefined,
  model: string,
  context: ServedContext,
): Promise<ServedStatus> {
  if (provider === 'local')
    return { kind: 'unknown', reason: 'a local model is pinned by its file and hash' };
  const cached = readServedModelList(context.home, provider, baseUrl);
  const fresh =
    cached !== undefined &&
    context.clock.now().getTime() - Date.parse(cached.fetchedAt) < SERVED_LIST_MAX_AGE_MS;
  let list = fresh ? cached : undefined;
  let failure: string | undefined;
  if (!list) {
    try {
      list = await refreshServedModels(provider, baseUrl, context);
    } catch (error) {
      failure = error instanceof ProviderError ? error.message : String(error);
    }
  }
  if (!list) {
    // A stale list still says what was served, but not that a model it lacks is gone now.
    const stale = cached ? findServed(cached, model) : undefined;
    if (cached && stale) return { kind: 'listed', list: cached, model: stale };
    return { kind: 'unknown', reason: failure ?? 'no list', ...(cached ? { list: cached } : {}) };
  }
  const listed = findServed(list, model);
  if (listed) return { kind: 'listed', list, model: listed };
  // Not in the list: ask for the model itself (it resolves aliases), and take the provider's answer.
  try {
    const answer = await checkServedModel(
      {
        provider,
        ...(baseUrl ? { baseUrl } : {}),
        apiKey: providerKey(provider, context.keys, context.env, baseUrl),
      },
      model,
      {
        ...(context.signal ? { signal: context.signal } : {}),
        ...(context.timeoutMs ? { timeoutMs: context.timeoutMs } : {}),
      },
    );
    return answer.served
      ? { kind: 'listed', list, model: answer.model }
      : { kind: 'not_served', list, message: answer.message };
  } catch (error) {
    return { kind: 'unknown', reason: error instanceof ProviderError ? error.message : String(error), list };
  }
}
