import { z } from 'zod';
import { PlanItem, type SessionEvent } from '../../common/events.js';
import { TODO_TOOL_NAME } from '../../tools/todo.js';

/** The model's current plan: the steps of its latest successful todo call, and the seq of that call's result. */
export type CurrentPlan = { items: PlanItem[]; resultSeq: number };

const TodoArguments = z.object({ todos: z.array(PlanItem) });

/**
 * The plan in effect after `events` (seq order): the arguments of the newest todo call whose result is not
 * an error, matched to its call as the projection matches results (the latest call with that id). A failed
 * call leaves the plan as it was; `[]` clears it (items empty). Pure; undefined when no todo call succeeded.
 */
export function currentPlan(events: readonly SessionEvent[]): CurrentPlan | undefined {
  const pending = new Map<string, string>();
  let plan: CurrentPlan | undefined;
  for (const event of events) {
    if (event.kind === 'assistant_message' || event.kind === 'interrupted') {
      for (const call of event.toolCalls) {
        if (call.name === TODO_TOOL_NAME) pending.set(call.id, call.arguments);
        else pending.delete(call.id);
      }
    } else if (event.kind === 'tool_result' && event.tool === TODO_TOOL_NAME) {
      const args = pending.get(event.toolCallId);
      pending.delete(event.toolCallId);
      if (args === undefined || event.isError) continue;
      const parsed = parseArguments(args);
      if (parsed) plan = { items: parsed, resultSeq: event.seq };
    }
  }
  return plan;
}

function parseArguments(text: string): PlanItem[] | undefined {
  try {
    const parsed = TodoArguments.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.todos : undefined;
  } catch {
    return undefined;
  }
}

/** First line of the message that re-states the plan after a compaction's summary. */
export const PLAN_HANDLE_HEADING =
  'Your plan when the summary was made (your latest todo list; call todo with the whole list to change it):';

const MARKS: Record<PlanItem['status'], string> = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };

/** The plan as a checklist, one step a line (`[x]` completed, `[>]` in progress, `[ ]` pending); byte-stable. */
export function formatPlan(items: readonly PlanItem[]): string {
  return items
    .map(
      (item) =>
        `- ${MARKS[item.status]} ${item.content}${item.status === 'in_progress' ? ' (in progress)' : ''}`,
    )
    .join('\n');
}

/** The message a compaction's plan becomes after its summary, or undefined when it recorded none. */
export function formatPlanHandle(items: readonly PlanItem[] | undefined): string | undefined {
  if (items === undefined || items.length === 0) return undefined;
  return `${PLAN_HANDLE_HEADING}\n${formatPlan(items)}`;
}
