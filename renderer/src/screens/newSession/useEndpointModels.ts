import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { useQuery, type QueryState } from '../../api/useQuery.js';
import { useDebounced } from '../../lib/useDebounced.js';

export type EndpointModels = ChannelOutput<'providers.models'>;

/** Whether `text` looks like a base URL worth asking (the contract refuses anything else). */
const askable = (text: string) => /^https?:\/\/[^\s/]/.test(text);

/**
 * Issue #37: the models an OpenAI-compatible endpoint lists, read by main (`providers.models`, never fetched
 * from the page), again when the URL has settled for a moment; undefined data while there is no URL to ask.
 */
export function useEndpointModels(baseUrl: string): QueryState<EndpointModels | undefined> {
  const settled = useDebounced(baseUrl.trim(), 300);
  return useQuery(
    () =>
      askable(settled)
        ? call(keel().providers.models({ provider: 'openai-compatible', baseUrl: settled }))
        : Promise.resolve(undefined),
    [settled],
  );
}
