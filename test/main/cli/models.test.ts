import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';

/*
 * keel models through the built CLI: the provider's own list (read from the scripted server in Anthropic's
 * format), its age, and the catalogue's hints beside it. Fictional models from settings.json `models`.
 */

const env = { ANTHROPIC_API_KEY: 'test-key' };

const cli = useCliFixture('keel-models-', {
  server: { apiKey: 'test-key' },
  prepare: ({ home, server }) => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({
        providers: { anthropic: { baseUrl: server.anthropicBaseUrl } },
        models: {
          'claude-test-listed': { provider: 'anthropic', contextWindow: 300_000 },
          'claude-test-gone': { provider: 'anthropic', contextWindow: 200_000, status: 'retired' },
        },
      }),
    );
    server.servedModels = [{ id: 'claude-test-listed' }];
  },
});

describe('keel models', () => {
  it("shows the provider's list with its age and marks each model listed or not", async () => {
    const before = await keel(cli.home, ['models', '--provider', 'anthropic'], env);
    expect(before.code).toBe(0);
    expect(before.stdout.split('\n')[0]).toBe("Anthropic's list was not read yet (keel models --refresh)");
    expect(before.stdout).toMatch(/^anthropic:claude-test-listed\s+300000\s+current\s+\?/m);
    expect(cli.server.modelRequests).toEqual([]);

    const refreshed = await keel(cli.home, ['models', '--provider', 'anthropic', '--refresh'], env);
    expect(refreshed.code).toBe(0);
    expect(refreshed.stdout.split('\n')[0]).toBe('Anthropic lists 1 models (checked just now)');
    expect(refreshed.stdout).toMatch(/^anthropic:claude-test-listed\s+300000\s+current\s+yes/m);
    expect(refreshed.stdout).toMatch(/^anthropic:claude-test-gone\s+200000\s+retired\s+no/m);

    const json = JSON.parse(
      (await keel(cli.home, ['models', '--provider', 'anthropic', '--json'], env)).stdout,
    ) as {
      served: { provider: string; count: number; age: string }[];
      models: { id: string; listed?: boolean }[];
    };
    expect(json.served).toEqual([
      expect.objectContaining({ provider: 'anthropic', count: 1, age: 'just now' }),
    ]);
    expect(json.models.find((model) => model.id === 'claude-test-listed')?.listed).toBe(true);
  });

  it('says in one line why the list could not be read, and refuses a provider it has no list for', async () => {
    const refused = await keel(cli.home, ['models', '--provider', 'anthropic', '--refresh'], {
      ANTHROPIC_API_KEY: 'wrong',
    });
    expect(refused.code).toBe(0);
    expect(refused.stdout.split('\n')[0]).toBe(
      "Anthropic's list was not read yet (keel models --refresh); could not check now: Anthropic rejected the API key (401): invalid x-api-key",
    );
    const bad = await keel(cli.home, ['models', '--provider', 'openai-compatible'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: --provider must be anthropic or openai (got "openai-compatible")\n');
  });
});
