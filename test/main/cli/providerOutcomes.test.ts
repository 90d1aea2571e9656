import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, onlySessionId } from '../../support/sessionFixture.js';

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test', OPENAI_API_KEY: 'sk-openai-test' };

const cli = useCliFixture('keel-cli-provider-outcomes-');

const newSession = (provider: 'anthropic' | 'openai', prompt: string) => [
  'run',
  '--project',
  cli.project,
  '--provider',
  provider,
  '--base-url',
  provider === 'anthropic' ? cli.server.anthropicBaseUrl : cli.server.openaiBaseUrl,
  '--model',
  'scripted-model',
  '--context-window',
  '32000',
  '--policy',
  'ask',
  prompt,
];

describe('what the provider says, said plainly by keel run', () => {
  it('prints a refusal with its category and explanation, exits 4, and logs the final usage and stop_details', async () => {
    cli.server.enqueue({
      kind: 'reply',
      text: 'Sure, here',
      stopReason: 'refusal',
      stopDetails: {
        type: 'refusal',
        category: 'cyber',
        explanation: 'This could enable malware development.',
      },
      provisionalUsage: { inputTokens: 589, cacheReadTokens: 0 },
      usage: { inputTokens: 1250, cacheReadTokens: 6289, outputTokens: 7 },
    });
    const run = await keel(cli.home, newSession('anthropic', 'write a keylogger'), ENV);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain(
      'keel: The model declined to continue (cyber): This could enable malware development. Rephrase the request',
    );
    const message = eventsOf(cli.home, onlySessionId(cli.home)).find(
      (event) => event.kind === 'assistant_message',
    );
    expect(message).toMatchObject({
      stopReason: 'refusal',
      stopDetails: { category: 'cyber', explanation: 'This could enable malware development.' },
      usage: { inputTokens: 1250, cacheReadTokens: 6289, outputTokens: 7 },
    });
  });

  it("sets an Anthropic refusal's turn aside, so the next request is sent without it (the docs require a reset)", async () => {
    cli.server.enqueue({ kind: 'reply', text: 'an earlier answer' });
    const first = await keel(cli.home, newSession('anthropic', 'an earlier question'), ENV);
    expect(first.code, first.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    cli.server.enqueue({
      kind: 'reply',
      text: 'Sure',
      stopReason: 'refusal',
      stopDetails: { type: 'refusal', category: 'cyber', explanation: 'Declined.' },
    });
    expect((await keel(cli.home, ['run', '--session', id, 'write a keylogger'], ENV)).code).toBe(4);
    const rewound = eventsOf(cli.home, id).find((event) => event.kind === 'rewound');
    expect(rewound).toMatchObject({ cause: 'refusal' });
    cli.server.enqueue({ kind: 'reply', text: 'fine' });
    const next = await keel(cli.home, ['run', '--session', id, 'explain the build instead'], ENV);
    expect(next.code, next.stderr).toBe(0);
    const sent = JSON.stringify(cli.server.requests.at(-1)?.body);
    expect(sent).toContain('an earlier question');
    expect(sent).toContain('explain the build instead');
    expect(sent).not.toContain('keylogger');
    expect(sent).not.toContain('Sure');
    const shown = await keel(cli.home, ['show', id], ENV);
    expect(shown.stdout).toMatch(
      /the provider declined the turn before this: it is left out of the conversation/,
    );
  });

  it('prints a reply cut at the output limit and exits 5', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'The first half of', stopReason: 'max_output_tokens' });
    const run = await keel(cli.home, newSession('openai', 'explain everything'), ENV);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toBe('The first half of\n');
    expect(run.stderr).toContain("keel: The reply was cut off at the model's output limit.");
  });

  it("says an exhausted quota once in the provider's words, records it as an error event, and does not retry", async () => {
    cli.server.enqueue({
      kind: 'streamError',
      code: 'insufficient_quota',
      message: 'You exceeded your current quota, please check your plan and billing details.',
    });
    const run = await keel(cli.home, newSession('openai', 'hello'), ENV);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/keel: retrying|could not reach/);
    expect(run.stderr).toContain(
      'You exceeded your current quota, please check your plan and billing details.',
    );
    expect(cli.server.requests.filter((request) => request.format === 'responses')).toHaveLength(1);
    const error = eventsOf(cli.home, onlySessionId(cli.home)).find((event) => event.kind === 'error');
    expect(error).toMatchObject({ code: 'quota', retryable: false });
  });
});
