import { z } from 'zod';
import { applyPatchTool } from './applyPatch.js';
import { commandOutputTool, stopCommandTool } from './backgroundTools.js';
import { editFileTool } from './editFile.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { listDirTool } from './listDir.js';
import { readFileTool } from './readFile.js';
import { runCommandTool } from './runCommandTool.js';
import { spawnSubagentTool } from './spawnSubagent.js';
import { todoTool } from './todo.js';
import { webFetchTool } from './webFetch.js';
import type { ToolDefinition, ToolMode, ToolModule } from './types.js';
import { writeFileTool } from './writeFile.js';

/** The tools of read-only mode: they can look at the workspace and change nothing (todo's plan lives in the log). */
export const readOnlyTools: readonly ToolModule[] = Object.freeze([
  readFileTool,
  listDirTool,
  globTool,
  grepTool,
  todoTool,
  webFetchTool,
]);

/** The tools of write mode: the read-only tools plus the ones that change files or run commands. */
export const writeTools: readonly ToolModule[] = Object.freeze([
  ...readOnlyTools,
  writeFileTool,
  editFileTool,
  // Offered to every model (the tool list is fixed per session): OpenAI's models are trained on it.
  applyPatchTool,
  runCommandTool,
  // #32: background commands (run_command {background: true}): read their output, stop them.
  commandOutputTool,
  stopCommandTool,
]);

/** The tool set of one mode. A tool outside the mode does not exist for it: get() returns undefined. */
export interface ToolRegistry {
  readonly mode: ToolMode;
  /** The tool of that name in this mode, or undefined (also for names of tools of other modes). */
  get(name: string): ToolModule | undefined;
  /** Names in registration order. */
  names(): string[];
  /** What a provider is told: name, description and JSON Schema per tool, in registration order. */
  definitions(): ToolDefinition[];
}

/** Options of createToolRegistry. */
export type ToolRegistryOptions = {
  /**
   * Adds spawn_subagent after the mode's tools. Only a host with a subagent runner sets it (the turn engine
   * refuses the tool without one); child sessions never get it, so subagents do not nest.
   */
  subagents?: boolean;
  /** Keeps only these of the mode's tools, in registration order (a child session's subset). */
  only?: readonly string[];
  /**
   * Tools from outside this folder (a session's MCP servers, main/mcp), after the built-in ones; a read-only
   * registry takes only those whose `mode` is read-only. A name already taken is left out.
   */
  extra?: readonly ToolModule[];
};

/** Builds the registry of a mode; read-only never contains a tool that writes or runs commands. */
export function createToolRegistry(mode: ToolMode, options: ToolRegistryOptions = {}): ToolRegistry {
  const base = mode === 'write' ? writeTools : readOnlyTools;
  const only = options.only === undefined ? undefined : new Set(options.only);
  const tools = [
    ...(only === undefined ? base : base.filter((tool) => only.has(tool.name))),
    ...(options.subagents ? [spawnSubagentTool] : []),
  ];
  for (const tool of options.extra ?? []) {
    if (mode === 'read-only' && tool.mode !== 'read-only') continue;
    if (!tools.some((known) => known.name === tool.name)) tools.push(tool);
  }
  // A Map, not an object, so names like "__proto__" or "constructor" find nothing.
  const byName = new Map<string, ToolModule>(tools.map((t) => [t.name, t]));
  // The shared converted definitions, never handed out: definitions() gives each caller its own copy.
  const definitions = tools.map(convertedDefinition);
  return Object.freeze({
    mode,
    get: (name: string) => byName.get(name),
    names: () => [...byName.keys()],
    definitions: () => definitions.map((d) => structuredClone(d)),
  });
}

/** Definitions already converted: a tool module is immutable, and converting costs ~0.3 ms a tool per turn. */
const converted = new WeakMap<ToolModule, ToolDefinition>();

/** Converts a tool's zod schema to the JSON Schema providers take (draft 2020-12, no $schema key). */
export function toToolDefinition(tool: ToolModule): ToolDefinition {
  return structuredClone(convertedDefinition(tool));
}

/** The converted definition itself (shared: callers outside this file get a copy). */
function convertedDefinition(tool: ToolModule): ToolDefinition {
  const known = converted.get(tool);
  if (known) return known;
  const schema =
    tool.inputJsonSchema !== undefined
      ? structuredClone(tool.inputJsonSchema)
      : (z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>);
  delete schema.$schema;
  const definition = { name: tool.name, description: tool.description, parameters: schema };
  converted.set(tool, definition);
  return definition;
}
