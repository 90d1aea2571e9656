import { describe, expect, it } from 'vitest';
import { fileKeyStore } from '../../../main/ipc/keys.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';

/*
 * Issue #37: a key saved in `keel serve`'s page (the home's key file) is the CLI's too: `keel run` on an
 * OpenAI-compatible endpoint with its own stored key sends that key, with no key in the environment.
 */

const OWN = 'sk-endpoint-own-cli-31';
const cli = useCliFixture('keel-cli-stored-keys-', { server: { apiKey: OWN } });

describe('keel run and the keys keel serve keeps', () => {
  it("sends an endpoint's own stored key; without it the server refuses", async () => {
    const args = [
      'run',
      '--project',
      cli.project,
      '--provider',
      'openai-compatible',
      '--base-url',
      cli.server.openaiBaseUrl,
      '--model',
      'scripted-model',
      '--context-window',
      '8000',
      'hello',
    ];
    // An empty variable is "not set": nothing from the environment.
    const env = { KEEL_OPENAI_COMPATIBLE_API_KEY: '' };
    const refused = await keel(cli.home, args, env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/key/i);

    fileKeyStore(cli.home).write?.({ endpoints: { [cli.server.openaiBaseUrl]: OWN } });
    cli.server.enqueue({ kind: 'reply', text: 'Keyed.' });
    const keyed = await keel(cli.home, args, env);
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(keyed.stdout).toContain('Keyed.');
    expect(cli.server.requests.at(-1)?.headers['authorization']).toBe(`Bearer ${OWN}`);
  });
});
