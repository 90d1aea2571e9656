import { z } from 'zod';
import { SessionEvent } from '../../common/events.js';
import { PlanPolicy } from '../../common/planEvents.js';
import { sessionId, seq } from './schemas.js';

/** Issue #30: plan mode's channels (the composer's mode toggle, the plan card's Approve / Send back). */
export const planChannels = {
  'plan.setMode': {
    doc: 'Turns plan mode on or off for the next prompts (a plan_mode_changed event; refused while a plan waits).',
    input: z.object({ sessionId, active: z.boolean() }),
    output: z.object({ event: SessionEvent.optional() }),
  },
  'plan.decide': {
    doc: 'Approves the plan waiting (the session continues in `policy`) or sends it back with comments; with resume (default) the turn continues.',
    input: z.discriminatedUnion('decision', [
      z.object({
        sessionId,
        requestSeq: seq,
        decision: z.literal('approve'),
        policy: PlanPolicy,
        resume: z.boolean().default(true),
      }),
      z.object({
        sessionId,
        requestSeq: seq,
        decision: z.literal('reject'),
        comments: z.string().min(1).max(20_000),
        resume: z.boolean().default(true),
      }),
    ]),
    output: z.object({ event: SessionEvent, turnId: z.string().optional() }),
  },
};
