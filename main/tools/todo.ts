import { z } from 'zod';
import { PlanStatus, type PlanItem } from '../common/events.js';
import { toolLimits } from './limits.js';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolModule, ToolOutcome } from './types.js';

/** The tool's name: main/core/projection/plan.ts finds the plan in the log by it. */
export const TODO_TOOL_NAME = 'todo';

const text = (what: string) =>
  z
    .string()
    .min(1)
    .max(toolLimits.todoMaxChars)
    .describe(`${what} At most ${toolLimits.todoMaxChars} characters.`);

const parameters = z.strictObject({
  todos: z
    .array(
      z.strictObject({
        content: text('The step, in the imperative: "Add rate limiting to the login route".'),
        status: PlanStatus.describe(
          'pending (not started), in_progress (being done now: at most one step), or completed.',
        ),
        activeForm: text('The step as it is being done: "Adding rate limiting". Optional.').optional(),
      }),
    )
    .max(toolLimits.todoMaxItems)
    .describe(
      `The whole plan, in order, every time: this list replaces the previous one. At most ${toolLimits.todoMaxItems} steps; [] clears the plan.`,
    ),
});

/** todo arguments after validation. */
export type TodoArgs = z.infer<typeof parameters>;

/**
 * The model's plan as a checklist: each call sends the whole list with each step's status, and the latest
 * successful call is the plan (the log keeps it; the session view shows it). Changes nothing on disk, so it
 * is a `read` that never needs approval and is simply run again on resume.
 */
export const todoTool: ToolModule<typeof parameters> = {
  name: TODO_TOOL_NAME,
  description:
    'Keep your plan for a multi-step task as a checklist the user sees. Send the whole list every time, ' +
    'with each step pending, in_progress or completed; keep exactly one step in_progress while you work ' +
    'and mark a step completed as soon as it is done.',
  parameters,
  mode: 'read-only',
  kind: 'read',
  execute: (args) => Promise.resolve(updatePlan(args)),
  preview: () => previewSubject(),
  resume: { rule: 'rerun' },
};

function updatePlan(args: TodoArgs): ToolOutcome {
  const items: PlanItem[] = args.todos;
  const blank = items.findIndex((item) => item.content.trim() === '' || item.activeForm?.trim() === '');
  if (blank !== -1) return errorOutcome(`todos.${blank}: a step's text is blank; say what the step does`);
  const active = items.flatMap((item, index) => (item.status === 'in_progress' ? [index] : []));
  if (active.length > 1) {
    return errorOutcome(
      `at most one step may be in_progress, and todos ${active.join(', ')} are; ` +
        'keep the one you are doing now and mark the others pending or completed',
    );
  }
  if (items.length === 0) return { content: 'Plan cleared.', isError: false };
  const done = items.filter((item) => item.status === 'completed').length;
  const current = active[0] === undefined ? undefined : items[active[0]];
  const doing = current ? `; in progress: ${current.activeForm ?? current.content}` : '';
  return { content: `Plan updated: ${done} of ${items.length} steps completed${doing}.`, isError: false };
}
