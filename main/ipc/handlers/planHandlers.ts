import { applyPlanMode, decidePlan } from '../../core/harness/index.js';
import type { planChannels } from '../contract/planChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** Issue #30: plan mode's handlers; the rules are the harness's (core/harness/plan.ts), refusals its HarnessErrors. */
export function planHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof planChannels> {
  const { turns } = ctx;
  return {
    'plan.setMode': (args) =>
      turns.appendWhileIdle(args.sessionId, (log) => {
        const event = applyPlanMode(log, args.active);
        return { events: event ? [event] : [], value: event ? { event } : {} };
      }),
    'plan.decide': async (args) => {
      const event = turns.appendWhileIdle(args.sessionId, (log) => {
        const decided = decidePlan(
          log,
          args.decision === 'approve'
            ? { requestSeq: args.requestSeq, decision: 'approve', policy: args.policy }
            : { requestSeq: args.requestSeq, decision: 'reject', comments: args.comments },
        );
        return { events: [decided.recorded], value: decided.recorded };
      });
      if (!args.resume) return { event };
      return { event, turnId: await turns.start(args.sessionId, {}) };
    },
  };
}
