import { describe, expect, it } from 'vitest';
import { CostReport } from '../../../main/common/costSchema.js';
import type { EventOf } from '../../../main/common/events.js';
import { costOf } from '../../../main/providers/catalogue.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-cli-budget-');

const reachedIn = (id: string) =>
  eventsOf(cli.home, id).filter(
    (event): event is EventOf<'budget_reached'> => event.kind === 'budget_reached',
  );

describe('keel run --budget-tokens, keel budget, keel resume', () => {
  it('stops before the request that would cross the cap (exit 6), says how to raise it, and resume continues after raising it', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'First.', usage: { inputTokens: 990_000, outputTokens: 100 } });
    const first = await keel(
      cli.home,
      newSessionArgs(cli, {
        policy: 'ask',
        prompt: 'one',
        contextWindow: 2_000_000,
        extra: ['--budget-tokens', '1000000'],
      }),
    );
    expect(first.code, first.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    expect(eventsOf(cli.home, id).find((event) => event.kind === 'budget_set')).toMatchObject({
      tokens: 1_000_000,
      source: 'created',
    });

    const second = await keel(cli.home, ['run', '--session', id, 'two']);
    expect(second.code, second.stderr).toBe(6);
    expect(second.stderr).toContain('Spend cap of 1,000,000 tokens reached: spent 990,100 tokens');
    expect(second.stderr).toContain(`keel budget ${id} --tokens COUNT, then keel resume ${id}`);
    // The scripted provider server received no request past the cap.
    expect(cli.server.requests).toHaveLength(1);
    expect(reachedIn(id)).toHaveLength(1);

    const raised = await keel(cli.home, ['budget', id, '--tokens', '3000000']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain('token cap 3,000,000');
    cli.server.enqueue({ kind: 'reply', text: 'Second.', usage: { inputTokens: 10, outputTokens: 5 } });
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('Second.');
    expect(cli.server.requests).toHaveLength(2);
  });

  it('a crash between the cap check and the request lets nothing past the cap on resume: the check is made again from the log', async () => {
    const args = newSessionArgs(cli, { policy: 'ask', prompt: 'one', extra: ['--budget-tokens', '1000000'] });
    await cli.killedAt(args, { KEEL_CRASH_AT: 'after_budget_check' });
    expect(cli.server.requests).toHaveLength(0);
    const id = onlySessionId(cli.home);
    // The cap is lowered below what the request could cost: the check passed before the crash does not count.
    expect((await keel(cli.home, ['budget', id, '--tokens', '100'])).code).toBe(0);
    const refused = await keel(cli.home, ['resume', id]);
    expect(refused.code, refused.stderr).toBe(6);
    expect(cli.server.requests).toHaveLength(0);
    expect((await keel(cli.home, ['budget', id, '--tokens', 'none'])).code).toBe(0);
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(cli.server.requests).toHaveLength(1);
  });

  it('refuses a cap that is not a number, naming the flag', async () => {
    const run = await keel(
      cli.home,
      newSessionArgs(cli, { policy: 'ask', prompt: 'one', extra: ['--budget-usd', 'lots'] }),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--budget-usd takes an amount in USD of 0 or more, or none (got "lots")');
    expect(cli.server.requests).toHaveLength(0);
  });
});

describe('keel cost', () => {
  it('reports figures equal to the sums of the recorded usage, by turn, model and kind', async () => {
    const usages = [
      { inputTokens: 1_250, cacheReadTokens: 6_289, cacheWriteTokens: 300, outputTokens: 70 },
      { inputTokens: 40, cacheReadTokens: 7_000, cacheWriteTokens: 0, outputTokens: 120 },
    ];
    for (const usage of usages) cli.server.enqueue({ kind: 'reply', text: 'Answer.', usage });
    const env = { ANTHROPIC_API_KEY: 'sk-ant-test' };
    const args = [
      'run',
      '--project',
      cli.project,
      '--provider',
      'anthropic',
      '--base-url',
      cli.server.anthropicBaseUrl,
      '--model',
      'claude-sonnet-5-5',
      '--budget-usd',
      '5',
      'one',
    ];
    const first = await keel(cli.home, args, env);
    expect(first.code, first.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    expect((await keel(cli.home, ['run', '--session', id, 'two'], env)).code).toBe(0);

    const run = await keel(cli.home, ['cost', id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = CostReport.parse(JSON.parse(run.stdout));
    const messages = eventsOf(cli.home, id).filter(
      (event): event is EventOf<'assistant_message'> => event.kind === 'assistant_message',
    );
    expect(messages.map((message) => message.usage)).toEqual(usages);
    const sum = (pick: (usage: (typeof usages)[number]) => number) =>
      usages.reduce((total, usage) => total + pick(usage), 0);
    const tokens = sum((u) => u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens);
    const usd = usages.reduce((total, usage) => total + (costOf(usage, 'claude-sonnet-5-5') ?? NaN), 0);
    expect(report.total.tokens).toBe(tokens);
    expect(report.total.usd).toBeCloseTo(usd, 12);
    expect(report.total.usdKnown).toBe(true);
    expect(report.caps).toEqual({ usd: 5 });
    expect(report.byKind.input.tokens).toBe(sum((u) => u.inputTokens));
    expect(report.byKind.cacheRead.tokens).toBe(sum((u) => u.cacheReadTokens));
    expect(report.byKind.cacheWrite.tokens).toBe(sum((u) => u.cacheWriteTokens));
    expect(report.byKind.output.tokens).toBe(sum((u) => u.outputTokens));
    const kinds = report.byKind;
    expect(kinds.input.usd + kinds.cacheRead.usd + kinds.cacheWrite.usd + kinds.output.usd).toBeCloseTo(
      usd,
      12,
    );
    expect(report.byTurn.map((turn) => [turn.turn, turn.requests, turn.tokens])).toEqual([
      [1, 1, 1_250 + 6_289 + 300 + 70],
      [2, 1, 40 + 7_000 + 120],
    ]);
    expect(report.byModel).toEqual([
      expect.objectContaining({ model: 'claude-sonnet-5-5', requests: 2, tokens }),
    ]);
    expect(report.cacheHitRate).toBeCloseTo(13_289 / (1_290 + 13_289 + 300), 12);
    expect(report.pricesAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const text = await keel(cli.home, ['cost', id]);
    expect(text.stdout).toContain(`session ${id}: USD cap $5.00, no token cap`);
    expect(text.stdout).toContain('turn 2 (1 req)');
  });
});
