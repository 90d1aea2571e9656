import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import type { ProviderServer } from '../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  onlySessionId,
  rejected,
  startSessionFixture,
} from '../../support/sessionFixture.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test' };

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  ({ dir, home, project, server } = await startSessionFixture('keel-cli-reasoning-'));
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
});

const newSession = (model: string, extra: string[], prompt = 'think about it') => [
  'run',
  '--project',
  project,
  '--provider',
  'anthropic',
  '--base-url',
  server.anthropicBaseUrl,
  '--model',
  model,
  '--context-window',
  '32000',
  '--policy',
  'ask',
  ...extra,
  prompt,
];

type Body = { thinking?: unknown; output_config?: unknown };

describe('reasoning on the command line', () => {
  it('pins the effort at keel run --reasoning, prints reasoning dimmed with --show-reasoning, switches with keel reasoning', async () => {
    server.enqueue({ kind: 'reply', thinking: 'Weighing it.', text: 'Done.' });
    const run = await keel(
      home,
      newSession('scripted-model', ['--reasoning', 'low', '--show-reasoning']),
      ENV,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Done.\n');
    expect(run.stderr).toContain('\x1b[2mWeighing \x1b[22m\x1b[2mit.\x1b[22m\n');
    const id = onlySessionId(home);
    const events = eventsOf(home, id);
    expect(events[0]).toMatchObject({ kind: 'session_created', reasoningEffort: 'low' });
    expect(events.find((event) => event.kind === 'assistant_message')).toMatchObject({
      reasoning: [{ type: 'thinking', thinking: 'Weighing it.' }],
    });
    expect((server.requests[0]?.body as Body).output_config).toEqual({ effort: 'low' });

    const switched = await keel(home, ['reasoning', id, 'off']);
    expect(switched.code, switched.stderr).toBe(0);
    expect(switched.stderr).toBe(`keel: ${id} reasons at off now (was low)\n`);
    expect(eventsOf(home, id).at(-1)).toMatchObject({ kind: 'reasoning_changed', effort: 'off' });

    server.enqueue({ kind: 'reply', thinking: 'not asked for', text: 'Plain.' });
    const next = await keel(home, ['run', '--session', id, 'again'], ENV);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain('not asked for');
    expect((server.requests.at(-1)?.body as Body).thinking).toBeUndefined();
    expect(rejected(server)).toEqual([]);

    const bad = await keel(home, ['reasoning', id, 'max']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: unknown reasoning effort "max": use off, low, medium, high\n');
    const onSession = await keel(home, ['run', '--session', id, '--reasoning', 'high', 'x'], ENV);
    expect(onSession.code).toBe(2);
    expect(onSession.stderr).toContain('keel reasoning');
  });

  it("refuses off for a model that always reasons, and uses the model's default when no effort is pinned", async () => {
    server.enqueue({ kind: 'reply', thinking: 'Hm.', text: 'ok' });
    const bad = await keel(home, newSession('claude-opus-5-5', ['--reasoning', 'off']), ENV);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'keel: claude-opus-5-5 always reasons: use low, medium, high (off is not accepted by the model)\n',
    );
    const run = await keel(home, newSession('claude-opus-5-5', []), ENV);
    expect(run.code, run.stderr).toBe(0);
    expect(eventsOf(home, onlySessionId(home))[0]).not.toHaveProperty('reasoningEffort');
    expect((server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'medium' });
  });
});
