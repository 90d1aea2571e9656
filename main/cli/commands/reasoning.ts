import type { Command } from 'commander';
import { ReasoningEffort } from '../../common/events.js';
import { effectiveEffort, foldSession, reasoningChoices } from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { withWritableSession } from '../session.js';

/**
 * Checks an effort given on the command line against what the model accepts: one of off, low, medium,
 * high, and `off` only for a model that can stop reasoning. Returns it parsed; each problem is one line.
 */
export function parseEffort(text: string, model: string): ReasoningEffort {
  const effort = ReasoningEffort.safeParse(text);
  const choices = reasoningChoices(model);
  if (!effort.success) throw new CliError(`unknown reasoning effort "${text}": use ${choices.join(', ')}`);
  if (!choices.includes(effort.data)) {
    throw new CliError(
      `${model} always reasons: use ${choices.join(', ')} (off is not accepted by the model)`,
    );
  }
  return effort.data;
}

/** `keel reasoning SESSION EFFORT`: the explicit switch of a session's reasoning effort (reasoning_changed). */
export function registerReasoning(program: Command, context: CliContext): void {
  program
    .command('reasoning')
    .description("switch a session's reasoning effort (recorded as reasoning_changed)")
    .argument('<session>', 'session id')
    .argument('<effort>', 'off | low | medium | high')
    .action(async (session: string, effortText: string) => {
      await withWritableSession(context.home(), session, (log) => {
        const { pin } = foldSession(log.read());
        const effort = parseEffort(effortText, pin.model);
        const before = effectiveEffort(pin.model, pin.reasoningEffort);
        log.append({ kind: 'reasoning_changed', effort });
        context.io.stderr(`keel: ${session} reasons at ${effort} now (was ${before})\n`);
      });
    });
}
