import { todayOf, type Clock } from '../../common/clock.js';
import type { ModelStatus, ServedModelList } from '../../common/models.js';
import type { ProviderKind, ReasoningEffort } from '../../common/events.js';
import { effectiveEffort, reasoningChoices } from '../../providers/reasoning.js';
import { readServedModelList } from '../../store/servedModels.js';
import type { Settings } from '../../store/settings.js';
import { catalogueOf } from './choose.js';
import { describeAge, findServed, SERVED_LIST_MAX_AGE_MS } from './served.js';

/** One model as a picker shows it. */
export type CatalogueEntry = {
  id: string;
  provider: 'anthropic' | 'openai';
  contextWindow: number;
  maxOutputTokens?: number;
  status: ModelStatus;
  retiresOn?: string;
  replacement?: string;
  priced: boolean;
  listed?: boolean;
  /** The efforts it takes (no `off` for a model that always reasons) and the one it uses unpinned. */
  reasoning: { choices: ReasoningEffort[]; defaultEffort: ReasoningEffort };
};

/** A model's reasoning as the pickers offer it (providers/reasoning.ts is the one source). */
function reasoningOf(model: string): CatalogueEntry['reasoning'] {
  return { choices: reasoningChoices(model), defaultEffort: effectiveEffort(model, undefined) };
}

/** A list's age and size, for "Anthropic lists 14 models (checked 3 h ago)". */
export type ServedSummary = {
  provider: ProviderKind;
  baseUrl?: string;
  fetchedAt: string;
  age: string;
  stale: boolean;
  count: number;
};

/** The summary of a cached list, its age by `clock`. */
export function summarizeServed(list: ServedModelList, clock: Clock): ServedSummary {
  return {
    provider: list.provider,
    ...(list.baseUrl ? { baseUrl: list.baseUrl } : {}),
    fetchedAt: list.fetchedAt,
    age: describeAge(list.fetchedAt, clock),
    stale: clock.now().getTime() - Date.parse(list.fetchedAt) >= SERVED_LIST_MAX_AGE_MS,
    count: list.models.length,
  };
}

/**
 * The catalogue as people choose from it: Keel's models (with settings.json's corrections), each marked with
 * whether its provider's last read list has it, then the models a provider lists that Keel does not know but
 * whose window the endpoint states; the suggestions; and `today` from the host's clock.
 */
export function catalogueView(home: string, settings: Settings, clock: Clock) {
  const catalogue = catalogueOf(settings);
  const lists = new Map<'anthropic' | 'openai', ServedModelList>();
  for (const provider of ['anthropic', 'openai'] as const) {
    const list = readServedModelList(home, provider, settings.providers[provider]?.baseUrl);
    if (list) lists.set(provider, list);
  }
  const models: CatalogueEntry[] = catalogue.models.map((model) => {
    const list = lists.get(model.provider);
    return {
      id: model.id,
      provider: model.provider,
      contextWindow: model.contextWindow,
      ...(model.maxOutputTokens !== undefined ? { maxOutputTokens: model.maxOutputTokens } : {}),
      status: model.status,
      ...(model.retiresOn !== undefined ? { retiresOn: model.retiresOn } : {}),
      ...(model.replacement !== undefined ? { replacement: model.replacement } : {}),
      priced: model.prices !== undefined,
      ...(list ? { listed: findServed(list, model.id) !== undefined } : {}),
      reasoning: reasoningOf(model.id),
    };
  });
  for (const [provider, list] of lists) {
    for (const served of list.models) {
      if (served.contextWindow === undefined) continue;
      if (catalogue.models.some((model) => findServed({ ...list, models: [served] }, model.id))) continue;
      models.push({
        id: served.id,
        provider,
        contextWindow: served.contextWindow,
        ...(served.maxOutputTokens !== undefined ? { maxOutputTokens: served.maxOutputTokens } : {}),
        status: 'current',
        priced: false,
        listed: true,
        reasoning: reasoningOf(served.id),
      });
    }
  }
  return {
    models,
    suggested: { ...catalogue.suggested },
    today: todayOf(clock),
    served: [...lists.values()].map((list) => summarizeServed(list, clock)),
  };
}
