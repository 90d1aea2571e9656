import { z } from 'zod';
import { PRESENT_PLAN_TOOL } from '../common/planEvents.js';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolModule } from './types.js';

/** The longest plan present_plan takes (characters of markdown). */
export const PLAN_MAX_CHARS = 20_000;

const parameters = z.strictObject({
  plan: z
    .string()
    .min(1)
    .max(PLAN_MAX_CHARS)
    .describe(
      `The plan, in markdown: what you will change, file by file, and how you will check it. At most ${PLAN_MAX_CHARS} characters.`,
    ),
});

/**
 * present_plan (issue #30, Claude Code's ExitPlanMode): in plan mode the model ends its turn with a plan.
 * Its `plan` kind makes the gate turn every call into an approval request that holds the plan (outside plan
 * mode, a tool error); the user's plan_approved / plan_rejected answers it (main/core/turn/calls.ts), so
 * nothing runs here: `execute` is reached only by a caller outside the gate.
 */
export const presentPlanTool: ToolModule<typeof parameters> = {
  name: PRESENT_PLAN_TOOL,
  description:
    'In plan mode: present your plan to the user when you have read enough to know what to change. The user ' +
    'approves it (you then implement it, with write tools) or sends it back with comments (revise it and ' +
    'present it again). Only for plan mode.',
  parameters,
  mode: 'read-only',
  kind: 'plan',
  execute: () => Promise.resolve(errorOutcome('present_plan is answered by the user, not run')),
  preview: () => Promise.resolve(previewSubject()),
  resume: { rule: 'rerun' },
};
