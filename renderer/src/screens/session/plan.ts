import type { TranscriptItem } from './transcriptItems.js';

/** Where one step of the model's plan stands (the todo tool's statuses). */
export type PlanStepStatus = 'pending' | 'in_progress' | 'completed';

/** One step of the model's plan, as its todo call sent it. */
export type PlanStep = { content: string; status: PlanStepStatus; activeForm?: string };

/** The plan in effect: its steps and the seq it stands on (a todo call's, or a compaction's `through`). */
export type ShownPlan = { steps: PlanStep[]; seq: number };

const STATUSES = new Set<string>(['pending', 'in_progress', 'completed']);

/**
 * The steps of a todo call's arguments, or undefined when they are not a plan. The arguments are the
 * model's text: only the known fields of well-formed steps are kept (React shows them as text).
 */
export function parsePlanArguments(text: string): PlanStep[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const todos = (raw as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return undefined;
  const steps: PlanStep[] = [];
  for (const entry of todos as unknown[]) {
    const step = entry as { content?: unknown; status?: unknown; activeForm?: unknown } | null;
    if (typeof step?.content !== 'string' || typeof step.status !== 'string' || !STATUSES.has(step.status))
      return undefined;
    steps.push({
      content: step.content,
      status: step.status as PlanStepStatus,
      ...(typeof step.activeForm === 'string' ? { activeForm: step.activeForm } : {}),
    });
  }
  return steps;
}

/**
 * The model's current plan from the transcript rows, as main derives it from the log: the newest todo call
 * that succeeded; a compaction's recorded plan stands in when no successful todo call after its `through`
 * is loaded (older events may not be). An empty list clears it. Pure.
 */
export function currentPlanOf(items: readonly TranscriptItem[]): ShownPlan | undefined {
  let plan: ShownPlan | undefined;
  for (const item of items) {
    if (item.type === 'tool' && item.name === 'todo' && item.status === 'succeeded' && item.result) {
      const steps = parsePlanArguments(item.arguments);
      if (steps && (plan === undefined || item.result.seq > plan.seq)) plan = { steps, seq: item.result.seq };
    } else if (item.type === 'compaction' && item.event.plan) {
      const { through, plan: steps } = item.event;
      if (plan === undefined || through > plan.seq) plan = { steps, seq: through };
    }
  }
  return plan === undefined || plan.steps.length === 0 ? undefined : plan;
}
