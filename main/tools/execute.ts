import type { z } from 'zod';
import type { ToolCall } from '../common/events.js';
import { describeError, errorOutcome, redactOutcome } from './outcome.js';
import type { ToolRegistry } from './registry.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';

/** A call whose tool exists in the registry's mode and whose arguments passed the tool's schema. */
export interface ParsedToolCall {
  tool: ToolModule;
  args: Record<string, unknown>;
}

/** Finds the tool and validates the arguments; on failure returns the tool error the model should see. */
export function parseToolCall(
  registry: ToolRegistry,
  call: ToolCall,
): { ok: true; call: ParsedToolCall } | { ok: false; outcome: ToolOutcome } {
  const tool = registry.get(call.name);
  if (!tool) {
    return {
      ok: false,
      outcome: errorOutcome(
        `unknown tool "${call.name}" in ${registry.mode} mode; available tools: ${registry.names().join(', ')}`,
      ),
    };
  }
  let raw: unknown;
  // Some providers send an empty string for a call without arguments.
  const text = call.arguments.trim() === '' ? '{}' : call.arguments;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      outcome: errorOutcome(`invalid arguments: not valid JSON (${(err as Error).message})`),
    };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, outcome: errorOutcome('invalid arguments: expected a JSON object') };
  }
  const parsed = tool.parameters.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      outcome: errorOutcome(`invalid arguments: ${formatIssues(parsed.error.issues, raw)}`),
    };
  }
  return { ok: true, call: { tool, args: parsed.data as Record<string, unknown> } };
}

/**
 * Runs one model tool call to an outcome. Never throws: bad JSON, an unknown tool (or one outside
 * the mode), wrong arguments and failures inside the tool all become a tool error for the model.
 * Content and diff pass through the context's redactor.
 */
export async function executeToolCall(
  registry: ToolRegistry,
  call: ToolCall,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const parsed = parseToolCall(registry, call);
  if (!parsed.ok) return redactOutcome(parsed.outcome, ctx);
  return runParsed(parsed.call, ctx);
}

/** Executes an already-validated call; never throws (see executeToolCall). */
export async function runParsed(call: ParsedToolCall, ctx: ToolContext): Promise<ToolOutcome> {
  if (ctx.signal?.aborted) return errorOutcome(`${call.tool.name} was cancelled before it started`);
  let outcome: ToolOutcome;
  try {
    outcome = await call.tool.execute(call.args, ctx);
  } catch (err) {
    outcome = errorOutcome(describeError(err));
  }
  return redactOutcome(outcome, ctx);
}

/** Formats zod issues as `path: expected string` clauses, one per problem, for the model to fix. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string {
  return issues
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments';
      switch (issue.code) {
        case 'invalid_type': {
          const expected = issue.expected === 'int' ? 'integer' : issue.expected;
          const value = valueAt(input, issue.path);
          return value === undefined
            ? `${where}: required (expected ${expected})`
            : `${where}: expected ${expected}, got ${describeType(value)}`;
        }
        case 'unrecognized_keys':
          return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
        default:
          return `${where}: ${issue.message}`;
      }
    })
    .join('; ');
}

function valueAt(input: unknown, at: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of at) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return String(value);
  return typeof value;
}
