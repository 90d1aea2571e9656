import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import type { ProviderKind } from '../../api/types.js';

/*
 * Pure: what the catalogue's lifecycle fields mean for a person choosing or keeping a model. Days are UTC
 * calendar days (YYYY-MM-DD), as the catalogue dates retirements: `retiresOn` is the first day a model fails.
 */

/** What providers.catalogue answers. */
export type Catalogue = ChannelOutput<'providers.catalogue'>;

/** One model of the catalogue. */
export type CatalogueModel = Catalogue['models'][number];

/** How soon before its retirement a pinned model is flagged in the session header. */
export const RETIREMENT_WARNING_DAYS = 30;

const DAY_MS = 86_400_000;
// A dated snapshot of a catalogue alias (`claude-sonnet-4-5-20250929`), as main's findModel matches it.
const SNAPSHOT_SUFFIX = /^-(\d{8}|\d{4}-\d{2}-\d{2})$/;
const STATUS_ORDER: Record<CatalogueModel['status'], number> = {
  current: 0,
  legacy: 1,
  deprecated: 2,
  retired: 3,
};

/** Whole days from `today` to `day` (both YYYY-MM-DD): 1 for tomorrow, 0 for today, negative for the past. */
export function daysUntil(day: string, today: string): number {
  return Math.round((Date.parse(`${day}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / DAY_MS);
}

/** True when Keel's catalogue says `model` is gone by `today` (marked retired, or its retirement day came). */
function catalogueSaysRetired(model: CatalogueModel, today: string): boolean {
  return model.status === 'retired' || (model.retiresOn !== undefined && today >= model.retiresOn);
}

/**
 * True when the provider no longer serves `model` on `today`: the catalogue says it retired and the provider's
 * list does not contradict it. A model the provider lists is served, whatever a catalogue date says.
 */
export function isRetiredOn(model: CatalogueModel, today: string): boolean {
  return model.listed !== true && catalogueSaysRetired(model, today);
}

/** True when the catalogue dates the model's retirement in the past but the provider still lists it. */
export function listedPastRetirement(model: CatalogueModel, today: string): boolean {
  return model.listed === true && catalogueSaysRetired(model, today);
}

/** Main's day (the one clock lifecycle is judged by); empty while the catalogue is loading. */
export function catalogueToday(catalogue: Catalogue | undefined): string {
  return catalogue?.today ?? '';
}

/** The catalogue entry of `id` for `provider` (also under a dated snapshot id); undefined for unknown models. */
export function findCatalogueModel(
  catalogue: Catalogue | undefined,
  provider: ProviderKind,
  id: string,
): CatalogueModel | undefined {
  return catalogue?.models.find(
    (model) =>
      model.provider === provider &&
      (id === model.id || (id.startsWith(model.id) && SNAPSHOT_SUFFIX.test(id.slice(model.id.length)))),
  );
}

/** "200k", "1M", "1.05M": a context window at a glance. */
export function formatWindow(tokens: number): string {
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(2))}M`;
  return `${Math.round(tokens / 1000)}k`;
}

/** "retires tomorrow", "retires in 12 days": how long a model still answers (at least one day). */
export function describeDaysLeft(days: number): string {
  return days <= 1 ? 'retires tomorrow' : `retires in ${days} days`;
}

/**
 * The badge a model list shows beside a model, or undefined for a current one: "retired", "retires in N
 * days" (deprecated with a date), "deprecated", or "legacy" (still served, superseded).
 */
export function lifecycleBadge(
  model: CatalogueModel,
  today: string,
): { tone: 'danger' | 'warning' | 'muted'; text: string } | undefined {
  if (isRetiredOn(model, today)) return { tone: 'danger', text: 'retired' };
  if (listedPastRetirement(model, today)) return { tone: 'warning', text: 'past its retirement date' };
  if (model.retiresOn !== undefined) {
    return { tone: 'warning', text: describeDaysLeft(daysUntil(model.retiresOn, today)) };
  }
  if (model.status === 'deprecated') return { tone: 'warning', text: 'deprecated' };
  if (model.status === 'legacy') return { tone: 'muted', text: 'legacy' };
  return undefined;
}

/**
 * The models a person can still pick for `provider`: retired ones left out, current first (the suggested
 * model at the top), then legacy, then deprecated; the catalogue's newest-first order within each.
 */
export function modelChoices(
  catalogue: Catalogue | undefined,
  provider: ProviderKind,
  today: string,
): CatalogueModel[] {
  if (!catalogue) return [];
  const suggested = catalogue.suggested[provider];
  const rank = (model: CatalogueModel) =>
    model.id === suggested ? -1 : STATUS_ORDER[model.retiresOn ? 'deprecated' : model.status];
  return catalogue.models
    .filter((model) => model.provider === provider && !isRetiredOn(model, today))
    .map((model, index) => ({ model, index }))
    .sort((a, b) => rank(a.model) - rank(b.model) || a.index - b.index)
    .map(({ model }) => model);
}

/**
 * The model to move a session to from `id`: its documented replacement when the catalogue lists it and it
 * still answers, else the provider's suggested model; undefined when neither differs from `id`.
 */
export function switchTarget(
  catalogue: Catalogue | undefined,
  provider: ProviderKind,
  id: string,
  today: string,
): string | undefined {
  const current = findCatalogueModel(catalogue, provider, id);
  const replacement = current?.replacement
    ? findCatalogueModel(catalogue, provider, current.replacement)
    : undefined;
  if (replacement && !isRetiredOn(replacement, today)) return replacement.id;
  const suggested = catalogue?.suggested[provider];
  return suggested !== undefined && suggested !== current?.id && suggested !== id ? suggested : undefined;
}

/** A pinned model that fails now or soon: retired, or retiring within `withinDays`. */
export type Retirement = {
  model: CatalogueModel;
  retired: boolean;
  /** The first day it fails, when announced. */
  retiresOn?: string;
  /** Days it still answers (only while not retired). */
  daysLeft?: number;
};

/** Whether the session's pinned model is retired or retires within `withinDays` days; undefined otherwise. */
export function retirementOf(
  catalogue: Catalogue | undefined,
  provider: ProviderKind,
  id: string,
  today: string,
  withinDays = RETIREMENT_WARNING_DAYS,
): Retirement | undefined {
  const model = findCatalogueModel(catalogue, provider, id);
  if (!model) return undefined;
  const dated = model.retiresOn !== undefined ? { retiresOn: model.retiresOn } : {};
  if (isRetiredOn(model, today)) return { model, retired: true, ...dated };
  // The provider still lists it: it answers, and no day can be counted down.
  if (model.retiresOn === undefined || listedPastRetirement(model, today)) return undefined;
  const daysLeft = daysUntil(model.retiresOn, today);
  return daysLeft <= withinDays ? { model, retired: false, retiresOn: model.retiresOn, daysLeft } : undefined;
}

/**
 * What to say under a model a person is about to pin, or undefined when nothing: a retired model cannot be
 * used; a retiring one works only until its day, and the session would then need a switch. `alternative`
 * (switchTarget's answer) is named as the model to use instead.
 */
export function pinNote(
  model: CatalogueModel | undefined,
  today: string,
  alternative?: string,
): { tone: 'danger' | 'warning'; text: string } | undefined {
  if (!model) return undefined;
  const instead = alternative ? ` Use ${alternative} instead.` : '';
  if (isRetiredOn(model, today)) {
    const when = model.retiresOn ? ` on ${model.retiresOn}` : '';
    return { tone: 'danger', text: `${model.id} was retired${when}: every request to it fails.${instead}` };
  }
  if (listedPastRetirement(model, today)) {
    return {
      tone: 'warning',
      text: `Keel's catalogue says ${model.id} retired on ${model.retiresOn ?? 'an earlier day'}, but the provider still lists it: it works for now.${instead}`,
    };
  }
  if (model.retiresOn === undefined) return undefined;
  return {
    tone: 'warning',
    text: `${model.id} ${describeDaysLeft(daysUntil(model.retiresOn, today))} (${model.retiresOn}); a session stays on its model, so this one would need a switch by then.${instead}`,
  };
}
