import { describe, expect, it } from 'vitest';
import { effortAfterSwitch } from '../../../../main/core/models/effort.js';

/* The one rule for the reasoning effort across a model switch (keel model and sessions.setModel use it). */

describe('effortAfterSwitch', () => {
  it('keeps a pinned effort the new model takes', () => {
    expect(
      effortAfterSwitch({ model: 'claude-sonnet-4-5', reasoningEffort: 'low' }, 'claude-opus-5-5', undefined),
    ).toEqual({
      ok: true,
      effort: 'low',
    });
    expect(
      effortAfterSwitch({ model: 'claude-opus-5-5', reasoningEffort: 'off' }, 'gpt-6.2-sol', undefined),
    ).toEqual({
      ok: true,
      effort: 'off',
    });
  });

  it('falls back to the default of a model that refuses the pinned effort, and says so', () => {
    expect(
      effortAfterSwitch({ model: 'claude-sonnet-4-5', reasoningEffort: 'off' }, 'claude-opus-5-5', undefined),
    ).toEqual({
      ok: true,
      warning:
        'claude-opus-5-5 does not take the reasoning effort off (it takes low, medium, high): it reasons at medium, its default',
    });
    expect(effortAfterSwitch({ model: 'gpt-6.2-sol', reasoningEffort: 'off' }, 'o4-mini', undefined)).toEqual(
      {
        ok: true,
        warning:
          'o4-mini does not take the reasoning effort off (it takes low, medium, high): it reasons at medium, its default',
      },
    );
  });

  it("leaves an unpinned effort unpinned: it follows the new model's default", () => {
    expect(effortAfterSwitch({ model: 'claude-sonnet-4-5' }, 'claude-opus-5-5', undefined)).toEqual({
      ok: true,
    });
  });

  it('takes an effort the switch names when the new model accepts it; null is its default', () => {
    expect(effortAfterSwitch({ model: 'x', reasoningEffort: 'off' }, 'claude-opus-5-5', 'high')).toEqual({
      ok: true,
      effort: 'high',
    });
    expect(effortAfterSwitch({ model: 'x', reasoningEffort: 'low' }, 'claude-opus-5-5', null)).toEqual({
      ok: true,
    });
    expect(effortAfterSwitch({ model: 'x' }, 'claude-opus-5-5', 'off')).toEqual({
      ok: false,
      message: 'claude-opus-5-5 always reasons: choose a reasoning effort of low, medium, high',
    });
  });

  it('lets a model the catalogue does not know take any effort', () => {
    expect(
      effortAfterSwitch({ model: 'claude-opus-5-5', reasoningEffort: 'off' }, 'qwen-local', undefined),
    ).toEqual({
      ok: true,
      effort: 'off',
    });
  });
});
