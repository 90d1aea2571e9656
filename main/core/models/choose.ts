import { daysBetween, todayOf } from '../../common/clock.js';
import type { ModelPin, ProviderKind } from '../../common/events.js';
import {
  BUILT_IN_CATALOGUE,
  findModel,
  isRetired,
  withOverrides,
  type ModelCatalogue,
  type ModelInfo,
} from '../../providers/catalogue.js';
import { readSettings, type Settings, writeSettings } from '../../store/settings.js';
import { effortAfterSwitch, type EffortRequest } from './effort.js';
import { describeAge, findServed, servedStatus, type ServedContext, type ServedStatus } from './served.js';

/*
 * The one place a model is chosen for a session, new or switched: the app's sessions.create and
 * sessions.setModel and the CLI's `keel run` and `keel model` call it and only word its errors. The
 * provider's models endpoint is the truth about what is served; Keel's catalogue fills in windows, prices
 * and lifecycle hints, and a built-in retirement date that has passed is at most a warning.
 */

/** How soon before a catalogue retirement day a choice is warned about. */
export const RETIREMENT_WARNING_DAYS = 30;

/** What a person asked for. Absent fields come from settings.json (and, on a switch, the session's pin). */
export type ModelRequest = {
  provider: ProviderKind;
  model: string;
  baseUrl?: string;
  contextWindow?: number;
  /** On a switch only: absent keeps the pinned effort (where the new model takes it), null its default. */
  reasoningEffort?: EffortRequest;
};

/** Why a model cannot be chosen; `code` lets a host add its own hint (a flag, a field). */
export class ModelChoiceError extends Error {
  constructor(
    readonly code: 'needs_base_url' | 'unknown_window' | 'not_served' | 'settings' | 'effort',
    message: string,
  ) {
    super(message);
    this.name = 'ModelChoiceError';
  }
}

/**
 * The pin to record, a one-line warning when the choice works today but may not for long, and on a switch
 * one when the pinned reasoning effort fell back to the new model's default (core/models/effort.ts).
 */
export type ModelChoice = {
  pin: ModelPin;
  warning?: string;
  effortWarning?: string;
  /**
   * Issue #37: the request gave the window of a model nothing else knows (settings, the provider's list, the
   * catalogue): the host keeps it with `rememberContextWindow` once the session exists, so it is asked once.
   */
  windowToRemember?: number;
};

/** The catalogue with settings.json's corrections; a bad entry is a ModelChoiceError naming it. */
export function catalogueOf(settings: Settings): ModelCatalogue {
  try {
    return withOverrides(BUILT_IN_CATALOGUE, settings.models);
  } catch (error) {
    throw new ModelChoiceError('settings', (error as Error).message);
  }
}

/** The base URL a choice uses: the request's, the session's own for the same provider, then settings'. */
function baseUrlOf(request: ModelRequest, settings: Settings, previous: ModelPin | undefined) {
  if (request.baseUrl !== undefined) return request.baseUrl;
  // Another model of the same provider keeps the session's endpoint (a proxy, a local server).
  if (previous && previous.provider === request.provider) return previous.baseUrl;
  return (
    settings.providers[request.provider]?.baseUrl ??
    (request.provider === settings.defaults.provider ? settings.defaults.baseUrl : undefined)
  );
}

const NAMES: Record<ProviderKind, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  'openai-compatible': 'the OpenAI-compatible server',
  local: 'the local model',
};

/** A model to suggest instead, only one the provider lists: the documented replacement, then Keel's suggestion. */
function alternative(
  known: ModelInfo | undefined,
  provider: ProviderKind,
  catalogue: ModelCatalogue,
  status: ServedStatus,
): string | undefined {
  const candidates = [
    known?.replacement,
    provider === 'openai-compatible' || provider === 'local' ? undefined : catalogue.suggested[provider],
  ];
  return candidates.find(
    (id): id is string =>
      id !== undefined && status.list !== undefined && findServed(status.list, id) !== undefined,
  );
}

/** The warning for a choice whose catalogue lifecycle is behind or ahead of the provider's word. */
function lifecycleWarning(
  model: string,
  known: ModelInfo | undefined,
  provider: ProviderKind,
  status: ServedStatus,
  today: string,
  context: ServedContext,
): string | undefined {
  if (provider === 'openai-compatible') {
    return status.kind === 'not_served'
      ? `${NAMES[provider]} does not list ${model} (${status.message}): the first request will tell`
      : undefined;
  }
  if (!known) return undefined;
  const day = known.retiresOn ? ` on ${known.retiresOn}` : '';
  if (isRetired(known, today)) {
    return status.kind === 'listed'
      ? `Keel's catalogue says ${model} was retired${day}, but ${NAMES[provider]} still lists it (checked ${describeAge(status.list.fetchedAt, context.clock)}): it works for now`
      : `Keel's catalogue says ${model} was retired${day}, and ${NAMES[provider]} could not be asked (${status.kind === 'unknown' ? status.reason : 'no answer'}): if it is gone, the first request says so`;
  }
  if (known.retiresOn === undefined) return undefined;
  const left = daysBetween(today, known.retiresOn);
  if (left > RETIREMENT_WARNING_DAYS) return undefined;
  return `${model} retires on ${known.retiresOn} (in ${left} day${left === 1 ? '' : 's'}); a session stays on its model, so it would need a switch by then${known.replacement ? ` (to ${known.replacement})` : ''}`;
}

/**
 * Chooses the model a session is pinned to (new) or switched to (`previous` set): resolves the endpoint and
 * the context window, asks the provider whether it serves the model, and returns the pin with a warning, or
 * throws a ModelChoiceError with a one-line message. Never refuses a model the provider lists.
 */
export async function chooseModel(
  request: ModelRequest,
  context: ServedContext & { previous?: ModelPin; settings?: Settings },
): Promise<ModelChoice> {
  const settings = context.settings ?? readSettings(context.home);
  const catalogue = catalogueOf(settings);
  const baseUrl = baseUrlOf(request, settings, context.previous);
  if (request.provider === 'openai-compatible' && baseUrl === undefined) {
    throw new ModelChoiceError(
      'needs_base_url',
      'an OpenAI-compatible provider needs a base URL (e.g. http://127.0.0.1:11434/v1 for Ollama)',
    );
  }
  // Checked before the provider is asked: a refused effort costs no request.
  const effort = context.previous
    ? effortAfterSwitch(context.previous, request.model, request.reasoningEffort)
    : undefined;
  if (effort && !effort.ok) throw new ModelChoiceError('effort', effort.message);
  const known = findModel(request.model, catalogue);
  const status = await servedStatus(request.provider, baseUrl, request.model, context);
  // The provider's own answer decides: a model it says it does not serve would fail every request.
  if (status.kind === 'not_served' && request.provider !== 'openai-compatible') {
    const instead = alternative(known, request.provider, catalogue, status);
    throw new ModelChoiceError(
      'not_served',
      `${NAMES[request.provider]} does not serve ${request.model} (${status.message}): choose a model it lists${instead ? `, such as ${instead}` : ''}`,
    );
  }
  const served = status.kind === 'listed' ? status.model : undefined;
  const knownWindow = settings.contextWindows[request.model] ?? served?.contextWindow ?? known?.contextWindow;
  const contextWindow = request.contextWindow ?? knownWindow;
  if (contextWindow === undefined) {
    throw new ModelChoiceError('unknown_window', `the context window of model "${request.model}" is unknown`);
  }
  const warning = lifecycleWarning(
    request.model,
    known,
    request.provider,
    status,
    todayOf(context.clock),
    context,
  );
  return {
    pin: {
      provider: request.provider,
      model: request.model,
      ...(baseUrl ? { baseUrl } : {}),
      contextWindow,
      ...(effort?.ok && effort.effort ? { reasoningEffort: effort.effort } : {}),
    },
    ...(warning ? { warning } : {}),
    ...(effort?.ok && effort.warning ? { effortWarning: effort.warning } : {}),
    ...(request.contextWindow !== undefined && knownWindow === undefined
      ? { windowToRemember: request.contextWindow }
      : {}),
  };
}

/**
 * Issue #37: keeps a model's context window in settings.json `contextWindows`, so the next session on it is
 * not asked again. Keeps an entry already there (the person's earlier word, or one edited in the file).
 */
export function rememberContextWindow(home: string, model: string, contextWindow: number): void {
  const settings = readSettings(home);
  if (settings.contextWindows[model] !== undefined) return;
  writeSettings(home, {
    ...settings,
    contextWindows: { ...settings.contextWindows, [model]: contextWindow },
  });
}
