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
