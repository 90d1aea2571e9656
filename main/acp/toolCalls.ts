import path from 'node:path';
import type { ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import { clip } from '../common/text.js';

/*
 * How a Keel tool call looks in an editor: its ACP kind (the icon), a one-line title and the files it
 * touches as absolute paths in the client's folder (follow-along). Pure. The arguments are the model's:
 * untrusted text, parsed defensively and clipped, never trusted as a path outside the project.
 */

/** Where a session's paths live: the project folder the editor has open, and the roots the model's paths start at. */
export type PathView = {
  /** The project folder (the client's cwd): what a location is shown under. */
  project: string;
  /** Absolute roots the model may name a file by (its checkout, or the folder itself). */
  roots: readonly string[];
};

const KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  list_dir: 'read',
  grep: 'search',
  glob: 'search',
  web_search: 'search',
  write_file: 'edit',
  edit_file: 'edit',
  apply_patch: 'edit',
  run_command: 'execute',
  web_fetch: 'fetch',
  todo: 'think',
  spawn_subagent: 'think',
};

/** The ACP kind of a Keel tool (MCP tools and unknown ones: `other`). */
export function toolKindOf(tool: string): ToolKind {
  return KINDS[tool] ?? 'other';
}

/** The call's arguments as an object, or {} when the model sent something else. */
export function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** A one-line title: what the call does, with its subject (clipped: the model's text). */
export function toolTitleOf(tool: string, args: Record<string, unknown>): string {
  const subject = (() => {
    switch (tool) {
      case 'read_file':
        return `Read ${str(args.path) ?? ''}`;
      case 'list_dir':
        return `List ${str(args.path) ?? '.'}`;
      case 'grep':
        return `Search ${JSON.stringify(str(args.pattern) ?? '')}${str(args.path) ? ` in ${str(args.path)}` : ''}`;
      case 'glob':
        return `Find ${str(args.pattern) ?? ''}`;
      case 'write_file':
        return `Write ${str(args.path) ?? ''}`;
      case 'edit_file':
        return `Edit ${str(args.path) ?? ''}`;
      case 'apply_patch':
        return `Patch ${patchPaths(str(args.patch) ?? str(args.input) ?? '').join(', ') || 'files'}`;
      case 'run_command':
        return `Run ${str(args.command) ?? ''}`;
      case 'web_fetch':
        return `Fetch ${str(args.url) ?? ''}`;
      case 'todo':
        return 'Update the plan';
      case 'spawn_subagent':
        return `Subagent: ${str(args.task) ?? ''}`;
      default: {
        const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
        return mcp ? `${mcp[1]}: ${mcp[2]}` : tool;
      }
    }
  })();
  return clip(subject.replace(/\s+/g, ' ').trim(), 160);
}

/** The files an apply_patch text names (Add/Update/Delete File headers and Move to), in order. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const match of patch.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm)) {
    const file = match[1]?.trim();
    if (file && !paths.includes(file)) paths.push(file);
  }
  return paths;
}

/**
 * A model path as an absolute path in the project folder, or undefined when it names no file of the project
 * (the session's private `/session/...` area, another Persistent Dir, anything outside its roots).
 */
export function projectPath(view: PathView, modelPath: string): string | undefined {
  if (path.isAbsolute(modelPath)) {
    for (const root of view.roots) {
      const relative = path.relative(root, modelPath);
      if (!relative.startsWith('..') && !path.isAbsolute(relative)) return path.join(view.project, relative);
    }
    return undefined;
  }
  const joined = path.resolve(view.project, modelPath);
  const relative = path.relative(view.project, joined);
  return relative.startsWith('..') ? undefined : joined;
}

/** The files a call touches, for the editor's follow-along. */
export function toolLocationsOf(
  tool: string,
  args: Record<string, unknown>,
  view: PathView,
): ToolCallLocation[] {
  const named: string[] = [];
  if (tool === 'apply_patch') named.push(...patchPaths(str(args.patch) ?? str(args.input) ?? ''));
  else if (KINDS[tool] === 'read' || KINDS[tool] === 'edit' || tool === 'grep') {
    const file = str(args.path);
    if (file) named.push(file);
  }
  const line = typeof args.offset === 'number' && args.offset > 0 ? Math.floor(args.offset) : undefined;
  const locations: ToolCallLocation[] = [];
  for (const file of named) {
    const absolute = projectPath(view, file);
    if (absolute !== undefined) locations.push({ path: absolute, ...(line ? { line } : {}) });
  }
  return locations;
}
