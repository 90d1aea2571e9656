import { realpathSync } from 'node:fs';
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
      outcome: errorOutcome(`invalid arguments: ${formatIssues(parsed.error.issues, raw, tool.parameters)}`),
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
    outcome = errorOutcome(withoutHostPaths(describeError(err), ctx));
  }
  return redactOutcome(outcome, ctx);
}

/**
 * A thrown error's text as the model may see it: an error from below the tools (the runner, the box, the file
 * system) can name the session's data folder or the Keel home, whose paths hold the session id. Areas become
 * their prefix (`/session/...`), the session's folder and the home a name; paths the tools' own refusals
 * show are already in the model's terms and pass unchanged.
 */
function withoutHostPaths(message: string, ctx: ToolContext): string {
  const names: [string, string][] = [
    ...(ctx.areas ?? []).map((area): [string, string] => [area.root, area.prefix]),
    [ctx.sessionDir, "<the session's data folder>"],
    ...(ctx.boxHidden ?? []).map((folder): [string, string] => [folder, "<Keel's data folder>"]),
  ];
  const spellings = names.flatMap(([folder, name]): [string, string][] => {
    let real = folder;
    try {
      real = realpathSync(folder);
    } catch {
      // a folder that is gone is named as it was given
    }
    return real === folder
      ? [[folder, name]]
      : [
          [folder, name],
          [real, name],
        ];
  });
  // Deepest first: an area inside the session's folder keeps its own prefix.
  spellings.sort((a, b) => b[0].length - a[0].length);
  let text = message;
  for (const [folder, name] of spellings) if (folder.length > 1) text = text.split(folder).join(name);
  return text;
}

/**
 * Formats zod issues as `path: expected string` clauses, one per problem, for the model to fix. With the
 * tool's schema, each clause says how to fix the call: a number sent as text (`"10"`) names the number to
 * send, and a null for an argument that may be left out says to leave it out.
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema?: z.ZodType,
): string {
  return issues
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments';
      switch (issue.code) {
        case 'invalid_type': {
          const expected = issue.expected === 'int' ? 'integer' : issue.expected;
          const value = valueAt(input, issue.path);
          if (value === undefined) return `${where}: required (expected ${expected})`;
          return `${where}: expected ${expected}, got ${describeType(value)}${typeHint(issue, value, schema)}`;
        }
        case 'too_small':
        case 'too_big':
          // A schema's own message (`.min(1, 'must not be empty; …')`) says more than the bound in words.
          return /^Too (small|big)\b/.test(issue.message)
            ? `${where}: ${describeBound(issue, valueAt(input, issue.path))}`
            : `${where}: ${issue.message}`;
        case 'unrecognized_keys':
          return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
        default:
          return `${where}: ${issue.message}`;
      }
    })
    .join('; ');
}

/** How to fix a value of the wrong type, when it is plain: `"10"` for a number, null for an optional argument. */
function typeHint(issue: z.core.$ZodIssueInvalidType, value: unknown, schema: z.ZodType | undefined): string {
  const numeric = issue.expected === 'number' || issue.expected === 'int';
  if (numeric && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) {
    return ` "${value}" (send the number without quotes: ${value.trim()})`;
  }
  if (value === null && optionalAt(schema, issue.path)) return ' (leave the argument out to use its default)';
  return '';
}

/** A size or range rule in words, with the value sent: `must be at least 1, got 0`. */
function describeBound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, value: unknown): string {
  const small = issue.code === 'too_small';
  const inclusive = issue.inclusive !== false;
  const limit = String(issue.code === 'too_small' ? issue.minimum : issue.maximum);
  if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
    const rule = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
    return `must be ${rule} ${limit}${typeof value === 'number' ? `, got ${value}` : ''}`;
  }
  const one = limit === '1';
  const unit =
    issue.origin === 'string'
      ? one
        ? 'character'
        : 'characters'
      : issue.origin === 'array'
        ? one
          ? 'item'
          : 'items'
        : one
          ? 'entry'
          : 'entries';
  const size = typeof value === 'string' || Array.isArray(value) ? `, got ${value.length}` : '';
  return `must have ${small ? 'at least' : 'at most'} ${limit} ${unit}${size}`;
}

/** Whether the object schema's top-level argument at `at` may be left out. */
function optionalAt(schema: z.ZodType | undefined, at: readonly PropertyKey[]): boolean {
  if (schema === undefined || at.length !== 1) return false;
  const shape = (schema as { shape?: Record<PropertyKey, z.ZodType | undefined> }).shape;
  const field = shape?.[at[0] as PropertyKey];
  return field?.safeParse(undefined).success === true;
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
