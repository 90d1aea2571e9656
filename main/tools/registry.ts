import { z } from 'zod';
import { editFileTool } from './editFile.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { listDirTool } from './listDir.js';
import { readFileTool } from './readFile.js';
import { runCommandTool } from './runCommand.js';
import type { ToolDefinition, ToolMode, ToolModule } from './types.js';
import { writeFileTool } from './writeFile.js';

/** The tools of read-only mode: they can look at the workspace and change nothing. */
export const readOnlyTools: readonly ToolModule[] = Object.freeze([
  readFileTool,
  listDirTool,
  globTool,
  grepTool,
]);

/** The tools of write mode: the read-only tools plus the ones that change files or run commands. */
export const writeTools: readonly ToolModule[] = Object.freeze([
  ...readOnlyTools,
  writeFileTool,
  editFileTool,
  runCommandTool,
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

/** Builds the registry of a mode; read-only never contains a tool that writes or runs commands. */
export function createToolRegistry(mode: ToolMode): ToolRegistry {
  const tools = mode === 'write' ? writeTools : readOnlyTools;
  // A Map, not an object, so names like "__proto__" or "constructor" find nothing.
  const byName = new Map<string, ToolModule>(tools.map((t) => [t.name, t]));
  const definitions = tools.map(toToolDefinition);
  return Object.freeze({
    mode,
    get: (name: string) => byName.get(name),
    names: () => [...byName.keys()],
    definitions: () => definitions.map((d) => structuredClone(d)),
  });
}

/** Converts a tool's zod schema to the JSON Schema providers take (draft 2020-12, no $schema key). */
export function toToolDefinition(tool: ToolModule): ToolDefinition {
  const schema = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, parameters: schema };
}
