import { describe, expect, it } from 'vitest';
import type { ChannelOutput } from '../../main/ipc/contract.js';
import { createHandlers } from '../../main/ipc/handlers.js';
import { fixedClock } from '../../main/common/clock.js';
import { makeTempDir, removeTempDir } from '../support/cli.js';

// Renderer modules are compiled by tsconfig.web.json: loaded at run time and described by the shapes used here.
type Catalogue = ChannelOutput<'providers.catalogue'>;
type Model = Catalogue['models'][number];
type Badge = { tone: string; text: string } | undefined;
type LifecycleModule = {
  daysUntil: (day: string, today: string) => number;
  formatWindow: (tokens: number) => string;
  lifecycleBadge: (model: Model, today: string) => Badge;
  modelChoices: (catalogue: Catalogue, provider: string, today: string) => Model[];
  switchTarget: (catalogue: Catalogue, provider: string, id: string, today: string) => string | undefined;
  retirementOf: (
    catalogue: Catalogue,
    provider: string,
    id: string,
    today: string,
  ) => { retired: boolean; retiresOn?: string; daysLeft?: number; model: Model } | undefined;
  pinNote: (model: Model | undefined, today: string, alternative?: string) => Badge;
};
const lifecyclePath = '../../renderer/src/screens/newSession/modelLifecycle.js';
const lifecycle = (await import(/* @vite-ignore */ lifecyclePath)) as LifecycleModule;

/** Every model's reasoning as the catalogue gives it (these tests look at lifecycle only). */
function withReasoning(models: Omit<Model, 'reasoning'>[]): Model[] {
  const reasoning: Model['reasoning'] = {
    choices: ['off', 'low', 'medium', 'high'],
    defaultEffort: 'medium',
  };
  return models.map((model) => ({ ...model, reasoning }));
}

/** A small catalogue in the contract's shape, with one model in every lifecycle state. */
const catalogue: Catalogue = {
  models: withReasoning([
    { id: 'opus-new', provider: 'anthropic', contextWindow: 1_000_000, status: 'current', priced: true },
    { id: 'haiku-new', provider: 'anthropic', contextWindow: 1_000_000, status: 'current', priced: false },
    {
      id: 'opus-old',
      provider: 'anthropic',
      contextWindow: 200_000,
      status: 'legacy',
      replacement: 'opus-new',
      priced: true,
    },
    {
      id: 'sonnet-old',
      provider: 'anthropic',
      contextWindow: 200_000,
      status: 'deprecated',
      retiresOn: '2026-11-30',
      replacement: 'sonnet-new',
      priced: true,
    },
    { id: 'sonnet-new', provider: 'anthropic', contextWindow: 1_000_000, status: 'current', priced: true },
    {
      id: 'gone',
      provider: 'anthropic',
      contextWindow: 200_000,
      status: 'retired',
      replacement: 'also-gone',
      priced: true,
    },
    {
      id: 'also-gone',
      provider: 'anthropic',
      contextWindow: 200_000,
      status: 'deprecated',
      retiresOn: '2026-10-01',
      priced: true,
    },
    { id: 'gpt-x', provider: 'openai', contextWindow: 400_000, status: 'current', priced: true },
  ]),
  suggested: { anthropic: 'sonnet-new', openai: 'gpt-x' },
  today: '2026-11-29',
  served: [],
};
const model = (id: string) => catalogue.models.find((entry) => entry.id === id) as Model;

describe('model lifecycle in the UI', () => {
  it('badges legacy and retiring models by the calendar day, and nothing for current ones', () => {
    expect(lifecycle.daysUntil('2026-11-30', '2026-11-29')).toBe(1);
    expect(lifecycle.daysUntil('2026-12-29', '2026-11-29')).toBe(30);
    expect(lifecycle.lifecycleBadge(model('opus-new'), '2026-11-29')).toBeUndefined();
    expect(lifecycle.lifecycleBadge(model('opus-old'), '2026-11-29')).toEqual({
      tone: 'muted',
      text: 'legacy',
    });
    expect(lifecycle.lifecycleBadge(model('sonnet-old'), '2026-11-29')?.text).toBe('retires tomorrow');
    expect(lifecycle.lifecycleBadge(model('sonnet-old'), '2026-11-18')?.text).toBe('retires in 12 days');
    // The retirement day itself is the first day it fails.
    expect(lifecycle.lifecycleBadge(model('sonnet-old'), '2026-11-30')).toEqual({
      tone: 'danger',
      text: 'retired',
    });
    expect([200_000, 1_000_000, 1_050_000, 128_000].map(lifecycle.formatWindow)).toEqual([
      '200k',
      '1M',
      '1.05M',
      '128k',
    ]);
  });

  it('lists current models first (the suggested one at the top), then legacy, then retiring; retired ones hidden', () => {
    const ids = (today: string) =>
      lifecycle.modelChoices(catalogue, 'anthropic', today).map((entry) => entry.id);
    expect(ids('2026-11-29')).toEqual(['sonnet-new', 'opus-new', 'haiku-new', 'opus-old', 'sonnet-old']);
    expect(ids('2026-11-30')).not.toContain('sonnet-old');
    expect(lifecycle.modelChoices(catalogue, 'openai-compatible', '2026-11-29')).toEqual([]);
  });

  it('moves a session to the replacement when it still answers, else to the suggested model', () => {
    expect(lifecycle.switchTarget(catalogue, 'anthropic', 'sonnet-old', '2026-11-29')).toBe('sonnet-new');
    expect(lifecycle.switchTarget(catalogue, 'anthropic', 'opus-old', '2026-11-29')).toBe('opus-new');
    // The replacement is itself retired: the suggestion instead.
    expect(lifecycle.switchTarget(catalogue, 'anthropic', 'gone', '2026-11-29')).toBe('sonnet-new');
    expect(lifecycle.switchTarget(catalogue, 'anthropic', 'sonnet-new', '2026-11-29')).toBeUndefined();
    // A dated snapshot is its alias.
    expect(lifecycle.switchTarget(catalogue, 'anthropic', 'sonnet-old-20250929', '2026-11-29')).toBe(
      'sonnet-new',
    );
  });

  it('warns about a pinned model that is retired or retires within 30 days, for its own provider only', () => {
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'sonnet-old', '2026-11-29')).toMatchObject({
      retired: false,
      retiresOn: '2026-11-30',
      daysLeft: 1,
    });
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'sonnet-old', '2026-10-30')).toBeUndefined();
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'sonnet-old', '2026-10-31')?.daysLeft).toBe(30);
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'sonnet-old', '2026-12-01')).toMatchObject({
      retired: true,
    });
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'gone', '2026-11-29')).toMatchObject({
      retired: true,
    });
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'opus-old', '2026-11-29')).toBeUndefined();
    expect(
      lifecycle.retirementOf(catalogue, 'openai-compatible', 'sonnet-old', '2026-11-29'),
    ).toBeUndefined();
    expect(lifecycle.retirementOf(catalogue, 'anthropic', 'local-model', '2026-11-29')).toBeUndefined();
  });

  it('says what pinning a retiring or retired model means, and nothing for a current or legacy one', () => {
    expect(lifecycle.pinNote(model('sonnet-old'), '2026-11-29', 'sonnet-new')?.text).toBe(
      'sonnet-old retires tomorrow (2026-11-30); a session stays on its model, so this one would need a switch by then. Use sonnet-new instead.',
    );
    expect(lifecycle.pinNote(model('gone'), '2026-11-29', 'sonnet-new')).toEqual({
      tone: 'danger',
      text: 'gone was retired: every request to it fails. Use sonnet-new instead.',
    });
    expect(lifecycle.pinNote(model('also-gone'), '2026-11-29')?.text).toBe(
      'also-gone was retired on 2026-10-01: every request to it fails.',
    );
    expect(lifecycle.pinNote(model('opus-old'), '2026-11-29')).toBeUndefined();
    expect(lifecycle.pinNote(undefined, '2026-11-29')).toBeUndefined();
  });

  it("never hides or refuses a model the provider still lists, whatever the catalogue's date says", () => {
    const listed = { ...model('sonnet-old'), listed: true };
    const unlisted = { ...model('sonnet-old'), listed: false };
    const withLists: Catalogue = {
      ...catalogue,
      models: catalogue.models.map((entry) => (entry.id === 'sonnet-old' ? listed : entry)),
    };
    // Past its catalogue day: still offered, badged, no countdown, and a warning (not a refusal) when picked.
    expect(lifecycle.modelChoices(withLists, 'anthropic', '2026-12-05').map((entry) => entry.id)).toContain(
      'sonnet-old',
    );
    expect(lifecycle.lifecycleBadge(listed, '2026-12-05')).toEqual({
      tone: 'warning',
      text: 'past its retirement date',
    });
    expect(lifecycle.retirementOf(withLists, 'anthropic', 'sonnet-old', '2026-12-05')).toBeUndefined();
    expect(lifecycle.pinNote(listed, '2026-12-05')).toEqual({
      tone: 'warning',
      text: "Keel's catalogue says sonnet-old retired on 2026-11-30, but the provider still lists it: it works for now.",
    });
    // Before the day, a listed model counts down as before; a list that lacks it changes nothing.
    expect(lifecycle.lifecycleBadge(listed, '2026-11-29')?.text).toBe('retires tomorrow');
    expect(lifecycle.lifecycleBadge(unlisted, '2026-12-05')?.text).toBe('retired');
  });

  it("reads main's real catalogue: every suggested model is offered first and no retired model is offered", async () => {
    const dir = makeTempDir('keel-catalogue-ui-');
    const handlers = createHandlers({
      home: dir,
      mode: 'serve',
      version: '1',
      env: {},
      clock: fixedClock('2026-12-01'),
    });
    try {
      const result = await handlers.invoke('providers.catalogue', {});
      if (!result.ok) throw new Error(result.error.message);
      const real = result.value as Catalogue;
      // Main's day is the one lifecycle is judged by: its clock, pinned here.
      expect(real.today).toBe('2026-12-01');
      const today = real.today;
      for (const provider of ['anthropic', 'openai'] as const) {
        const choices = lifecycle.modelChoices(real, provider, today);
        expect(choices[0]?.id).toBe(real.suggested[provider]);
        expect(choices.some((entry) => entry.status === 'retired')).toBe(false);
      }
    } finally {
      await handlers.close();
      removeTempDir(dir);
    }
  });
});
