import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { describeError, errorOutcome } from '../tools/outcome.js';
import type { ToolContext, ToolModule, ToolOutcome } from '../tools/types.js';
import { CallTimeout, type McpConnection } from './connection.js';
import { outcomeFromResult } from './results.js';

/** Tool names providers accept (OpenAI's limit is the tighter: 64). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A server's description is cut here: it reaches every request's tool list. */
const MAX_DESCRIPTION_CHARS = 2000;
/** Per-call bound when the server's config names none: time without an answer or a progress notification. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 120_000;
/** A call that keeps reporting progress is still cancelled after this many times its `timeoutMs` in all. */
export const MCP_CALL_TOTAL_FACTOR = 10;

/** The name an MCP tool has in Keel's registry and in the model's tool list. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** A listed tool Keel cannot offer, and why. */
export type SkippedTool = { server: string; tool: string; reason: string };

const validators = new AjvJsonSchemaValidator();

/**
 * Turns one server's listed tools into tool modules. Pure but for compiling validators. A tool whose full
 * name is not a valid provider tool name, repeats a name, or whose input schema is not an object schema is
 * skipped with a reason. `readOnlyHint: true` makes a `read` tool of the read-only registry that re-runs on
 * resume; every other tool is a `command`: behind the policy and the approval gate, asked again on resume.
 */
export function toolModulesFor(
  connection: McpConnection,
  tools: readonly Tool[],
  options: { callTimeoutMs?: number } = {},
): { modules: ToolModule[]; skipped: SkippedTool[] } {
  const server = connection.entry.name;
  const modules: ToolModule[] = [];
  const skipped: SkippedTool[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = mcpToolName(server, tool.name);
    const skip = (reason: string) => skipped.push({ server, tool: tool.name, reason });
    if (!TOOL_NAME.test(name)) {
      skip(`its name ${JSON.stringify(name.slice(0, 80))} is not 1-64 letters, digits, _ or -`);
      continue;
    }
    if (seen.has(name)) {
      skip('the server lists two tools of that name');
      continue;
    }
    if (tool.execution?.taskSupport === 'required') {
      // The SDK's callTool refuses such a tool; Keel does not run MCP tasks (tasks/get, tasks/result).
      skip('it runs only as an MCP task (execution.taskSupport "required"), which Keel does not support');
      continue;
    }
    const schema = tool.inputSchema as Record<string, unknown>;
    if (schema.type !== 'object') {
      skip('its input schema is not an object schema');
      continue;
    }
    let validate: ReturnType<typeof validators.getValidator>;
    try {
      validate = validators.getValidator(schema);
    } catch (error) {
      skip(`its input schema does not compile: ${describeError(error)}`);
      continue;
    }
    seen.add(name);
    modules.push(moduleFor(connection, tool, name, schema, validate, options.callTimeoutMs));
  }
  return { modules, skipped };
}

function moduleFor(
  connection: McpConnection,
  tool: Tool,
  name: string,
  schema: Record<string, unknown>,
  validate: ReturnType<typeof validators.getValidator>,
  callTimeoutMs = DEFAULT_MCP_CALL_TIMEOUT_MS,
): ToolModule {
  const readOnly = tool.annotations?.readOnlyHint === true;
  const server = connection.entry.name;
  // Arguments are checked against the server's own JSON Schema before any call leaves Keel.
  const parameters = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const checked = validate(value);
    if (!checked.valid)
      ctx.addIssue({ code: 'custom', message: checked.errorMessage ?? 'does not match the schema' });
  });
  const description = `${tool.description ?? tool.title ?? tool.name}`.slice(0, MAX_DESCRIPTION_CHARS);
  return {
    name,
    description: `${description}\n(Tool "${tool.name}" of the MCP server "${server}".)`,
    parameters,
    inputJsonSchema: schema,
    mode: readOnly ? 'read-only' : 'write',
    kind: readOnly ? 'read' : 'command',
    preview: () => Promise.resolve({ ok: true, subject: {}, protectedReason: null }),
    resume: readOnly ? { rule: 'rerun' } : { rule: 'ask' },
    execute: (args: Record<string, unknown>, ctx: ToolContext) =>
      callOnce(connection, tool.name, args, ctx, callTimeoutMs),
  };
}

async function callOnce(
  connection: McpConnection,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
  timeoutMs: number,
): Promise<ToolOutcome> {
  const started = Date.now();
  try {
    const result = await connection.callTool(tool, args, {
      timeoutMs,
      maxTotalMs: timeoutMs * MCP_CALL_TOTAL_FACTOR,
      idempotencyKey: ctx.idempotencyKey,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      // Progress is the call's live output (the UI shows it as a command's), redacted like everything shown.
      onProgress: (progress) => ctx.onOutput?.(ctx.redactor.redact(`${describeProgress(progress)}\n`)),
    });
    return { ...outcomeFromResult(result, ctx), durationMs: Date.now() - started };
  } catch (error) {
    const message = describeError(error);
    if (ctx.signal?.aborted) return errorOutcome(`${tool} was cancelled (the server was told)`);
    if (error instanceof CallTimeout) return errorOutcome(error.message, { timedOut: true });
    const state = connection.state;
    if (state.state === 'failed') {
      return errorOutcome(
        `MCP server "${connection.entry.name}" stopped during the call: ${state.error.replace(/^the server stopped: /, '')}`,
      );
    }
    return errorOutcome(`MCP server "${connection.entry.name}": ${message}`);
  }
}

/** One progress notification as a line: "[progress 2/5] message". */
function describeProgress(progress: { progress: number; total?: number; message?: string }): string {
  const count =
    progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  return `[progress ${count}]${progress.message ? ` ${progress.message.slice(0, 500)}` : ''}`;
}
