import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, onlySessionId, rejected } from '../../support/sessionFixture.js';

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test' };
const KEYS = { ...ENV, OPENAI_API_KEY: 'sk-openai-test' };

const cli = useCliFixture('keel-cli-reasoning-');

const newSession = (model: string, extra: string[], prompt = 'think about it') => [
  'run',
  '--project',
  cli.project,
  '--provider',
  'anthropic',
  '--base-url',
  cli.server.anthropicBaseUrl,
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
    cli.server.enqueue({ kind: 'reply', thinking: 'Weighing it.', text: 'Done.' });
    const run = await keel(
      cli.home,
      newSession('scripted-model', ['--reasoning', 'low', '--show-reasoning']),
      ENV,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Done.\n');
    expect(run.stderr).toContain('\x1b[2mWeighing \x1b[22m\x1b[2mit.\x1b[22m\n');
    const id = onlySessionId(cli.home);
    const events = eventsOf(cli.home, id);
    expect(events[0]).toMatchObject({ kind: 'session_created', reasoningEffort: 'low' });
    expect(events.find((event) => event.kind === 'assistant_message')).toMatchObject({
      reasoning: [{ type: 'thinking', thinking: 'Weighing it.' }],
    });
    expect((cli.server.requests[0]?.body as Body).output_config).toEqual({ effort: 'low' });

    const switched = await keel(cli.home, ['reasoning', id, 'off']);
    expect(switched.code, switched.stderr).toBe(0);
    expect(switched.stderr).toBe(`keel: ${id} reasons at off now (was low)\n`);
    expect(eventsOf(cli.home, id).at(-1)).toMatchObject({ kind: 'reasoning_changed', effort: 'off' });

    cli.server.enqueue({ kind: 'reply', thinking: 'not asked for', text: 'Plain.' });
    const next = await keel(cli.home, ['run', '--session', id, 'again'], ENV);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain('not asked for');
    expect((cli.server.requests.at(-1)?.body as Body).thinking).toBeUndefined();
    expect(rejected(cli.server)).toEqual([]);

    const bad = await keel(cli.home, ['reasoning', id, 'max']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('keel: unknown reasoning effort "max": use off, low, medium, high\n');
    const onSession = await keel(cli.home, ['run', '--session', id, '--reasoning', 'high', 'x'], ENV);
    expect(onSession.code).toBe(2);
    expect(onSession.stderr).toContain('keel reasoning');
  });

  it("refuses off for a model that always reasons, and uses the model's default when no effort is pinned", async () => {
    cli.server.enqueue({ kind: 'reply', thinking: 'Hm.', text: 'ok' });
    const bad = await keel(cli.home, newSession('claude-opus-5-5', ['--reasoning', 'off']), ENV);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'keel: claude-opus-5-5 always reasons: use low, medium, high (off is not accepted by the model)\n',
    );
    const run = await keel(cli.home, newSession('claude-opus-5-5', []), ENV);
    expect(run.code, run.stderr).toBe(0);
    expect(eventsOf(cli.home, onlySessionId(cli.home))[0]).not.toHaveProperty('reasoningEffort');
    expect((cli.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'medium' });
  });
});

// A kill between a tool call's start and its result, then `keel resume` in a new process: the request after
// the re-run read must still carry the reasoning that made the call, exactly as logged (Anthropic rejects a
// tool result whose turn lost or changed its signed thinking; the Responses API one whose reasoning item
// cannot be verified), so the model goes on with its own reasoning.
describe('reasoning through a crash and resume', () => {
  const readCall = { name: 'read_file', arguments: { path: 'notes.txt' } };

  it.each(['anthropic', 'openai'] as const)(
    '%s: the resumed request replays the logged reasoning unchanged',
    async (provider) => {
      fs.writeFileSync(path.join(cli.project, 'notes.txt'), 'alpha\n');
      cli.server.enqueue({ kind: 'reply', thinking: 'Read the notes first.', toolCalls: [readCall] });
      const crashed = await keel(cli.home, runArgs(provider), {
        ...KEYS,
        KEEL_CRASH_AT: 'after_tool_started',
      });
      expect(crashed.signal).toBe('SIGKILL');
      const id = onlySessionId(cli.home);
      const assistant = eventsOf(cli.home, id).find((event) => event.kind === 'assistant_message');
      const logged = assistant?.kind === 'assistant_message' ? assistant.reasoning : undefined;
      expect(logged?.length).toBe(1);

      cli.server.enqueue({ kind: 'reply', thinking: 'It says alpha.', text: 'alpha.' });
      const resumed = await keel(cli.home, ['resume', id], KEYS);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('alpha.');
      expect(rejected(cli.server)).toEqual([]);
      const replayed = JSON.stringify(cli.server.requests.at(-1)?.body);
      if (provider === 'anthropic') {
        const part = logged?.[0];
        expect(part?.type).toBe('thinking');
        if (part?.type === 'thinking') expect(replayed).toContain(JSON.stringify(part.signature));
      } else {
        const part = logged?.[0];
        expect(part?.type).toBe('reasoning');
        if (part?.type === 'reasoning') expect(replayed).toContain(JSON.stringify(part.encryptedContent));
      }
      const results = eventsOf(cli.home, id).filter((event) => event.kind === 'tool_result');
      expect(results).toHaveLength(1);
    },
  );

  function runArgs(provider: 'anthropic' | 'openai'): string[] {
    const baseUrl = provider === 'anthropic' ? cli.server.anthropicBaseUrl : cli.server.openaiBaseUrl;
    return [
      'run',
      '--project',
      cli.project,
      '--provider',
      provider,
      '--base-url',
      baseUrl,
      '--model',
      'scripted-model',
      '--context-window',
      '32000',
      '--policy',
      'full-auto',
      '--reasoning',
      'low',
      'read the notes',
    ];
  }

  it('keel model keeps the pinned effort the new model takes, else falls back to its default with a warning', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'Done.' });
    const run = await keel(cli.home, newSession('scripted-model', ['--reasoning', 'off']), ENV);
    expect(run.code, run.stderr).toBe(0);
    const id = onlySessionId(cli.home);

    const toAlways = await keel(cli.home, ['model', id, 'anthropic:claude-opus-5-5'], ENV);
    expect(toAlways.code, toAlways.stderr).toBe(0);
    expect(toAlways.stderr).toContain(
      'keel: warning: claude-opus-5-5 does not take the reasoning effort off (it takes low, medium, high): it reasons at medium, its default\n',
    );
    expect(toAlways.stderr).toContain(
      `keel: ${id} now uses anthropic:claude-opus-5-5 (was anthropic:scripted-model), reasoning at medium (its default)\n`,
    );
    const fellBack = eventsOf(cli.home, id).at(-1);
    expect(fellBack).toMatchObject({ kind: 'model_changed', model: 'claude-opus-5-5' });
    expect(fellBack).not.toHaveProperty('reasoningEffort');

    expect((await keel(cli.home, ['reasoning', id, 'low'])).code).toBe(0);
    const kept = await keel(
      cli.home,
      ['model', id, 'anthropic:scripted-model', '--context-window', '32000'],
      ENV,
    );
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toBe(
      `keel: ${id} now uses anthropic:scripted-model (was anthropic:claude-opus-5-5), reasoning at low\n`,
    );
    expect(eventsOf(cli.home, id).at(-1)).toMatchObject({
      kind: 'model_changed',
      model: 'scripted-model',
      reasoningEffort: 'low',
    });
    cli.server.enqueue({ kind: 'reply', thinking: 'Briefly.', text: 'Low.' });
    const next = await keel(cli.home, ['run', '--session', id, 'again'], ENV);
    expect(next.code, next.stderr).toBe(0);
    expect((cli.server.requests.at(-1)?.body as Body).output_config).toEqual({ effort: 'low' });
    expect(rejected(cli.server)).toEqual([]);
  });
});
