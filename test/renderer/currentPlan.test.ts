import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';

// The renderer is compiled by tsconfig.web.json: its modules are loaded at run time (see transcriptItems.test.ts).
type Item = { type: string; [field: string]: unknown };
type Step = { content: string; status: string; activeForm?: string };
// Module paths as variables, so the Node project's type check does not follow them into the renderer.
const transcriptPath = '../../renderer/src/screens/session/transcriptItems.js';
const planPath = '../../renderer/src/screens/session/plan.js';
const { foldTranscript } = (await import(/* @vite-ignore */ transcriptPath)) as {
  foldTranscript: (events: readonly SessionEvent[]) => Item[];
};
const { currentPlanOf, parsePlanArguments } = (await import(/* @vite-ignore */ planPath)) as {
  currentPlanOf: (items: readonly Item[]) => { steps: Step[]; seq: number } | undefined;
  parsePlanArguments: (text: string) => Step[] | undefined;
};

let seq = 0;
const event = (fields: Record<string, unknown>) =>
  ({ ...fields, seq: ++seq, at: '2025-03-01T10:00:00.000Z' }) as SessionEvent;
const todo = (id: string, todos: Step[]) =>
  event({
    kind: 'assistant_message',
    content: '',
    toolCalls: [{ id, name: 'todo', arguments: JSON.stringify({ todos }) }],
  });
const result = (id: string, isError = false) =>
  event({
    kind: 'tool_result',
    toolCallId: id,
    tool: 'todo',
    content: 'Plan updated',
    ...(isError ? { isError } : {}),
  });

describe('the plan the session view shows', () => {
  it('is the newest todo call that succeeded; a running or failed one does not count; [] clears it', () => {
    const a = [{ content: 'Read', status: 'in_progress', activeForm: 'Reading' }];
    const b = [
      { content: 'Read', status: 'completed' },
      { content: 'Fix', status: 'in_progress' },
    ];
    const events = [event({ kind: 'user_message', content: 'go' }), todo('t1', a)];
    expect(currentPlanOf(foldTranscript(events))).toBeUndefined();
    events.push(result('t1'));
    expect(currentPlanOf(foldTranscript(events))?.steps).toEqual(a);
    events.push(todo('t2', b));
    expect(currentPlanOf(foldTranscript(events))?.steps).toEqual(a);
    events.push(result('t2', true));
    expect(currentPlanOf(foldTranscript(events))?.steps).toEqual(a);
    events.push(todo('t3', b), result('t3'));
    expect(currentPlanOf(foldTranscript(events))?.steps).toEqual(b);
    events.push(todo('t4', []), result('t4'));
    expect(currentPlanOf(foldTranscript(events))).toBeUndefined();
  });

  it('takes a compaction’s recorded plan when no later todo call is loaded', () => {
    const kept = [{ content: 'Test', status: 'pending' }];
    const compaction = event({ kind: 'compaction', through: 3, summary: 's', pinned: 'p', plan: kept });
    expect(currentPlanOf(foldTranscript([compaction]))?.steps).toEqual(kept);
    // A todo call after the compaction's through is newer than the plan it recorded, wherever the events sit.
    seq = 0;
    const newer = [{ content: 'Ship', status: 'in_progress' }];
    const events = [
      event({ kind: 'user_message', content: 'go' }),
      event({ kind: 'user_message', content: 'more' }),
      event({ kind: 'user_message', content: 'again' }),
      todo('t9', newer),
      result('t9'),
      event({ kind: 'compaction', through: 3, summary: 's', pinned: 'p', plan: kept }),
    ];
    expect(currentPlanOf(foldTranscript(events))?.steps).toEqual(newer);
  });

  it('keeps only well-formed steps of the model’s arguments', () => {
    expect(parsePlanArguments('{"todos":[{"content":"a","status":"pending","extra":1}]}')).toEqual([
      { content: 'a', status: 'pending' },
    ]);
    expect(parsePlanArguments('{"todos":[{"content":"a","status":"done"}]}')).toBeUndefined();
    expect(parsePlanArguments('{"todos":"a"}')).toBeUndefined();
    expect(parsePlanArguments('not json')).toBeUndefined();
  });
});
