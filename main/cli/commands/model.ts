import type { Command } from 'commander';
import { ProviderKind } from '../../common/events.js';
import { changePolicy, effectiveEffort, foldSession, unconfirmedEndpoint } from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { chooseCliModel } from '../models.js';
import { withSessionLog, withWritableSession } from '../session.js';

/**
 * `keel model SESSION PROVIDER:MODEL [--base-url URL] [--context-window N]`: the explicit switch of a
 * session's pinned model, recorded as model_changed. `keel policy SESSION POLICY` likewise for the policy.
 */
export function registerModel(program: Command, context: CliContext): void {
  program
    .command('model')
    .description("switch a session's pinned model (recorded as model_changed)")
    .argument('<session>', 'session id')
    .argument('<provider:model>', 'e.g. anthropic:claude-sonnet-5-5 or openai-compatible:qwen2.5-coder')
    .option('--base-url <url>', 'provider base URL (needed for openai-compatible)')
    .option('--context-window <tokens>', 'context window of a model Keel does not know', parsePositiveInteger)
    .action(
      async (session: string, target: string, options: { baseUrl?: string; contextWindow?: number }) => {
        const home = context.home();
        const split = target.indexOf(':');
        const provider = ProviderKind.safeParse(split > 0 ? target.slice(0, split) : '');
        const model = target.slice(split + 1);
        if (split <= 0 || !provider.success || model === '') {
          throw new CliError(
            `expected PROVIDER:MODEL with provider anthropic, openai or openai-compatible (got "${target}")`,
          );
        }
        // The provider is asked before the lease is taken; a turn in between makes the switch stale.
        const before = withSessionLog(home, session, (log) => {
          const state = foldSession(log.read());
          const input = { sessionId: session, mark: state.imported, pin: state.pin, pinSeq: state.pinSeq };
          return { pin: state.pin, lastSeq: log.lastSeq(), unconfirmed: !!unconfirmedEndpoint(input) };
        });
        // An endpoint that came with an imported file is confirmed only by naming it (--base-url), never kept.
        const { baseUrl: _unchosen, ...withoutEndpoint } = before.pin;
        const previous = before.unconfirmed ? withoutEndpoint : before.pin;
        const { pin } = await chooseCliModel(
          context,
          {
            provider: provider.data,
            model,
            ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
            ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
          },
          previous,
        );
        await withWritableSession(home, session, (log) => {
          const appended = log.append({ kind: 'model_changed', ...pin }, { expectedLastSeq: before.lastSeq });
          if (!appended.ok) throw new CliError(`session ${session} changed meanwhile: run keel model again`);
          // The pinned effort is kept where the new model takes it (core/models/effort.ts); say which it is.
          const effort = effectiveEffort(pin.model, pin.reasoningEffort);
          context.io.stderr(
            `keel: ${session} now uses ${pin.provider}:${pin.model} (was ${before.pin.provider}:${before.pin.model}), reasoning at ${effort}${pin.reasoningEffort ? '' : ' (its default)'}\n`,
          );
        });
      },
    );
  program
    .command('policy')
    .description("change a session's approval policy (recorded as policy_changed)")
    .argument('<session>', 'session id')
    .argument('<policy>', 'read-only | ask | auto-edit | full-auto')
    .action(async (session: string, policyText: string) => {
      await withWritableSession(context.home(), session, (log) => {
        // The one rule and event every host records (core/harness/policyChange.ts).
        const { policy, previous } = changePolicy(log, policyText);
        context.io.stderr(`keel: ${session} policy is now ${policy} (was ${previous})\n`);
      });
    });
}
