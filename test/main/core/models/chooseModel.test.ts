import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../../main/common/clock.js';
import { chooseModel, ModelChoiceError, servedStatus } from '../../../../main/core/models/index.js';
import { readServedModelList } from '../../../../main/store/servedModels.js';
import { useSessionFixture } from '../../../support/sessionFixture.js';

/*
 * The one model choice behind sessions.create / setModel and keel run / model, against the scripted server's
 * real models endpoints (Anthropic's paged list, OpenAI's list, GET /v1/models/{id}) and a real home. The
 * clock is pinned; the models are fictional (settings.json `models`).
 */

const env = {
  ANTHROPIC_API_KEY: 'test-key',
  OPENAI_API_KEY: 'test-key',
  KEEL_OPENAI_COMPATIBLE_API_KEY: 'test-key',
};
const at = (iso: string) => fixedClock(iso);

function settings(models: Record<string, unknown> = {}) {
  fs.mkdirSync(fixture.home, { recursive: true });
  fs.writeFileSync(path.join(fixture.home, 'settings.json'), JSON.stringify({ models }));
}

const context = (iso = '2031-05-01T12:00:00Z') => ({
  home: fixture.home,
  clock: at(iso),
  keys: {},
  env,
});

const fixture = useSessionFixture('keel-choose-', {
  server: { apiKey: 'test-key' },
  prepare: () => {
    settings({
      'claude-test-a': { provider: 'anthropic', contextWindow: 100_000 },
      'claude-test-old': {
        provider: 'anthropic',
        contextWindow: 100_000,
        status: 'deprecated',
        retiresOn: '2031-04-01',
        replacement: 'claude-test-a',
      },
    });
  },
});

describe('chooseModel', () => {
  it('matches a dated snapshot in the list to its alias and the alias to a listed snapshot', async () => {
    fixture.server.servedModels = [{ id: 'claude-test-a-20310101' }];
    const byAlias = await chooseModel(
      { provider: 'anthropic', model: 'claude-test-a', baseUrl: fixture.server.anthropicBaseUrl },
      context(),
    );
    expect(byAlias.pin).toEqual({
      provider: 'anthropic',
      model: 'claude-test-a',
      baseUrl: fixture.server.anthropicBaseUrl,
      contextWindow: 100_000,
    });
    expect(byAlias.warning).toBeUndefined();
    // Only the list was read: the alias was found in it, no per-model request.
    expect(fixture.server.modelRequests.map((request) => request.path)).toEqual(['/v1/models']);
  });

  it('reads a stale list again, and keeps the stale one when that read fails', async () => {
    fixture.server.servedModels = [{ id: 'claude-test-old' }];
    const base = {
      provider: 'anthropic' as const,
      model: 'claude-test-old',
      baseUrl: fixture.server.anthropicBaseUrl,
    };
    await chooseModel(base, context('2031-05-01T12:00:00Z'));
    expect(fixture.server.modelRequests).toHaveLength(1);
    // 30 minutes on: fresh, not read again.
    await chooseModel(base, context('2031-05-01T12:30:00Z'));
    expect(fixture.server.modelRequests).toHaveLength(1);
    // Two hours on: stale, read again.
    await chooseModel(base, context('2031-05-01T14:00:00Z'));
    expect(fixture.server.modelRequests).toHaveLength(2);
    expect(readServedModelList(fixture.home, 'anthropic', fixture.server.anthropicBaseUrl)?.fetchedAt).toBe(
      '2031-05-01T14:00:00.000Z',
    );
    // The endpoint goes away: the stale list still says the model was served.
    await fixture.server.close();
    const offline = await chooseModel(base, context('2031-05-02T14:00:00Z'));
    expect(offline.warning).toBe(
      "Keel's catalogue says claude-test-old was retired on 2031-04-01, but Anthropic still lists it (checked 1 day ago): it works for now",
    );
  });

  it('asks OpenAI in its own format and refuses what it does not serve in its words', async () => {
    fixture.server.servedModels = [{ id: 'gpt-test-a' }];
    await expect(
      chooseModel(
        {
          provider: 'openai',
          model: 'gpt-test-b',
          baseUrl: fixture.server.openaiBaseUrl,
          contextWindow: 64_000,
        },
        context(),
      ),
    ).rejects.toThrow(
      new ModelChoiceError(
        'not_served',
        'OpenAI does not serve gpt-test-b (The model `gpt-test-b` does not exist or you do not have access to it. (404)): choose a model it lists',
      ),
    );
    expect(fixture.server.modelRequests.map((request) => [request.format, request.path])).toEqual([
      ['openai', '/v1/models'],
      ['openai', '/v1/models/gpt-test-b'],
    ]);
  });

  it('never refuses a model an OpenAI-compatible server does not list (some serve more than they list): it warns', async () => {
    fixture.server.servedModels = [{ id: 'qwen-listed' }];
    const choice = await chooseModel(
      {
        provider: 'openai-compatible',
        model: 'qwen-other',
        baseUrl: fixture.server.openaiBaseUrl,
        contextWindow: 32_768,
      },
      context(),
    );
    expect(choice.pin.model).toBe('qwen-other');
    expect(choice.warning).toBe(
      'the OpenAI-compatible server does not list qwen-other (The model `qwen-other` does not exist or you do not have access to it. (404)): the first request will tell',
    );
  });

  it('names a bad settings.json model entry, and needs a window for a model nobody states one for', async () => {
    settings({ 'claude-test-new': { provider: 'anthropic' } });
    await expect(chooseModel({ provider: 'anthropic', model: 'claude-test-a' }, context())).rejects.toThrow(
      'settings.json models.claude-test-new: a model Keel does not know needs "provider" (anthropic or openai) and "contextWindow"',
    );
    settings({});
    fixture.server.servedModels = [{ id: 'claude-test-z' }];
    await expect(
      chooseModel(
        { provider: 'anthropic', model: 'claude-test-z', baseUrl: fixture.server.anthropicBaseUrl },
        context(),
      ),
    ).rejects.toMatchObject({ code: 'unknown_window' });
  });
});

describe('servedStatus', () => {
  it('is unknown, with the reason, when the provider cannot be asked; nothing is cached', async () => {
    const status = await servedStatus('anthropic', fixture.server.anthropicBaseUrl, 'claude-test-a', {
      ...context(),
      env: {},
    });
    expect(status).toEqual({ kind: 'unknown', reason: 'Anthropic needs an API key to list its models' });
    expect(fs.existsSync(path.join(fixture.home, 'served-models.json'))).toBe(false);
  });
});
