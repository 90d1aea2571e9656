import { describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { createToolRegistry, toToolDefinition } from '../../../main/tools/registry.js';
import { todoTool } from '../../../main/tools/todo.js';
import type { ToolContext, ToolOutcome } from '../../../main/tools/types.js';
import { errorOf } from './helpers.js';

// todo touches nothing on disk: a context pointing nowhere proves it never looks.
const ctx: ToolContext = {
  workspace: '/nonexistent-keel-root',
  sessionDir: '/nonexistent-keel-session',
  artifactsDir: '/nonexistent-keel-artifacts',
  idempotencyKey: 'ev1-todo',
  redactor: { redact: (text) => text },
  sandbox: { kind: 'none', reason: 'test' } as ToolContext['sandbox'],
  protectedGlobs: [],
};

const readOnly = createToolRegistry('read-only');
const todo = (args: unknown): Promise<ToolOutcome> =>
  executeToolCall(readOnly, { id: 'c', name: 'todo', arguments: JSON.stringify(args) }, ctx);

const step = (content: string, status: string, activeForm?: string) => ({
  content,
  status,
  ...(activeForm === undefined ? {} : { activeForm }),
});

describe('todo', () => {
  it('takes the whole list in the shape Claude Code’s TodoWrite sends, and sums it up for the model', async () => {
    const outcome = await todo({
      todos: [
        step('Read the server code', 'completed', 'Reading the server code'),
        step('Add rate limiting to the login route', 'in_progress', 'Adding rate limiting'),
        step('Write a test for the limit', 'pending'),
      ],
    });
    expect(outcome).toEqual({
      content: 'Plan updated: 1 of 3 steps completed; in progress: Adding rate limiting.',
      isError: false,
    });
    expect((await todo({ todos: [step('Ship it', 'in_progress')] })).content).toBe(
      'Plan updated: 0 of 1 steps completed; in progress: Ship it.',
    );
    expect((await todo({ todos: [] })).content).toBe('Plan cleared.');
  });

  it('is in the read-only registry, a read that never needs approval and re-runs on resume', () => {
    expect(readOnly.get('todo')).toBe(todoTool);
    expect(createToolRegistry('write').get('todo')).toBe(todoTool);
    expect(todoTool.kind).toBe('read');
    expect(todoTool.resume).toEqual({ rule: 'rerun' });
    const schema = toToolDefinition(todoTool).parameters as {
      properties: { todos: { items: { required: string[]; properties: Record<string, unknown> } } };
      required: string[];
    };
    expect(schema.required).toEqual(['todos']);
    expect(schema.properties.todos.items.required).toEqual(['content', 'status']);
    expect(Object.keys(schema.properties.todos.items.properties)).toEqual([
      'content',
      'status',
      'activeForm',
    ]);
  });

  it('refuses two steps in progress, and says which and what to do', async () => {
    const outcome = await todo({
      todos: [step('a', 'in_progress'), step('b', 'completed'), step('c', 'in_progress')],
    });
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.content)).toBe(
      'at most one step may be in_progress, and todos 0, 2 are; keep the one you are doing now and mark the others pending or completed',
    );
  });

  it('refuses what the schema does not say, with the fix: another shape, a bad status, blank or oversized text', async () => {
    // Codex's update_plan shape is not accepted: one schema, named in the error.
    expect(errorOf((await todo({ plan: [{ step: 'a', status: 'pending' }] })).content)).toBe(
      'invalid arguments: todos: required (expected array); unknown argument "plan"',
    );
    expect(errorOf((await todo({ todos: [step('a', 'done')] })).content)).toMatch(
      /^invalid arguments: todos\.0\.status: .*"pending"\|"in_progress"\|"completed"/,
    );
    expect(errorOf((await todo({ todos: [step('   ', 'pending')] })).content)).toBe(
      "todos.0: a step's text is blank; say what the step does",
    );
    expect(
      errorOf((await todo({ todos: [step('x'.repeat(toolLimits.todoMaxChars + 1), 'pending')] })).content),
    ).toBe(
      `invalid arguments: todos.0.content: must have at most ${toolLimits.todoMaxChars} characters, got ${toolLimits.todoMaxChars + 1}`,
    );
    const many = Array.from({ length: toolLimits.todoMaxItems + 1 }, (_, i) => step(`s${i}`, 'pending'));
    expect(errorOf((await todo({ todos: many })).content)).toBe(
      `invalid arguments: todos: must have at most ${toolLimits.todoMaxItems} items, got ${toolLimits.todoMaxItems + 1}`,
    );
    expect(errorOf((await todo({ todos: '[{"content":"a"}]' })).content)).toBe(
      'invalid arguments: todos: expected array, got string',
    );
  });
});
