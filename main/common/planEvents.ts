import { z } from 'zod';
import { eventBase } from './eventBase.js';

/*
 * Issue #30, item 6: plan mode. A session in plan mode reads and plans; its model ends with a plan through
 * `present_plan`, whose call waits like an approval request (the request holds the plan); the user approves
 * it, choosing the policy the session continues in, or sends it back with comments. Kept out of events.ts
 * (its size), which joins these kinds into the union.
 */

const { seq, base } = eventBase;

/** The tool the model presents its plan with (Claude Code's ExitPlanMode): its approval request holds the plan. */
export const PRESENT_PLAN_TOOL = 'present_plan';

/** The policies an approved plan can continue in: the ones that can change files (Keel's edit policies). */
export const PlanPolicy = z.enum(['ask', 'auto-edit', 'full-auto']);
export type PlanPolicy = z.infer<typeof PlanPolicy>;

/** The user turned plan mode on or off (the app's mode toggle, `keel run --plan`, an editor's session mode). */
export const PlanModeChanged = z.object({
  ...base,
  kind: z.literal('plan_mode_changed'),
  active: z.boolean(),
});

/** The user approved the plan of approval request `requestSeq`: plan mode ends and `policy` is the session's. */
export const PlanApproved = z.object({
  ...base,
  kind: z.literal('plan_approved'),
  requestSeq: seq,
  policy: PlanPolicy,
});

/** The user sent the plan of `requestSeq` back: `comments` are what the model reads next; plan mode stays on. */
export const PlanRejected = z.object({
  ...base,
  kind: z.literal('plan_rejected'),
  requestSeq: seq,
  comments: z.string().max(20_000),
});

/** The plan text of a present_plan call's arguments (JSON text), or undefined when they hold none. */
export function planTextOf(args: string): string | undefined {
  try {
    const parsed = z.object({ plan: z.string() }).safeParse(JSON.parse(args));
    return parsed.success ? parsed.data.plan : undefined;
  } catch {
    return undefined;
  }
}

/** The kinds that answer an approval request (a plan's decisions included), each naming it by `requestSeq`. */
export const DECISION_KINDS: ReadonlySet<string> = new Set([
  'approval_granted',
  'approval_denied',
  'plan_approved',
  'plan_rejected',
]);

/** The request an event decides (its `requestSeq`), or null for any other event. */
export function decidedRequestOf(event: { kind: string; requestSeq?: number }): number | null {
  return DECISION_KINDS.has(event.kind) && event.requestSeq !== undefined ? event.requestSeq : null;
}
