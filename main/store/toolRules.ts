import { z } from 'zod';
import { appendJsonlEvent, readJsonlEvents } from './appendOnlyJsonl.js';

/**
 * `<home>/tool-rules.jsonl`: one event per line, appended when a person grants an MCP tool with scope `tool`
 * (that tool runs without asking in every later session of the project) or revokes that rule. A rule is in
 * effect while the newest event for its (project, tool) adds it. Kept in the home, never in the project, so
 * nothing a model writes into the project can add one. Nothing is ever rewritten.
 */
export const ToolRuleEvent = z.object({
  kind: z.enum(['tool_rule_added', 'tool_rule_revoked']),
  /** Real path of the project folder. */
  project: z.string().min(1),
  /** The registry name (`mcp__<server>__<tool>`). */
  tool: z.string().regex(/^mcp__[A-Za-z0-9_-]+$/, 'a tool rule names an MCP tool (mcp__<server>__<tool>)'),
  /** Who: the grant (`keel approve`, the app), `keel revoke`, `keel mcp rules --revoke`, the settings screen. */
  via: z.string().min(1),
  /** The session and grant event the rule came from, for people reading the file. */
  sessionId: z.string().optional(),
  grantSeq: z.number().int().positive().optional(),
  at: z.string().min(1),
});
export type ToolRuleEvent = z.infer<typeof ToolRuleEvent>;

/** A rule in effect: which tool runs without asking in the project, since when, through what. */
export type ToolRule = { project: string; tool: string; addedAt: string; via: string; sessionId?: string };

const FILE = 'tool-rules.jsonl';

/** Appends one rule event (one `O_APPEND` line: concurrent writers never interleave). */
export function appendToolRule(
  home: string,
  event: Omit<z.input<typeof ToolRuleEvent>, 'at'>,
): ToolRuleEvent {
  return appendJsonlEvent(home, FILE, ToolRuleEvent, event);
}

/** Every rule event, oldest first; a line that is not a valid event is skipped (it allows nothing). */
export function readToolRules(home: string): ToolRuleEvent[] {
  return readJsonlEvents(home, FILE, ToolRuleEvent);
}

/** The rules in effect for `project` (every project when absent), sorted by tool. Pure. */
export function activeToolRules(events: readonly ToolRuleEvent[], project?: string): ToolRule[] {
  const newest = new Map<string, ToolRuleEvent>();
  for (const event of events) {
    if (project !== undefined && event.project !== project) continue;
    newest.set(`${event.project}\n${event.tool}`, event);
  }
  return [...newest.values()]
    .filter((event) => event.kind === 'tool_rule_added')
    .map((event) => ({
      project: event.project,
      tool: event.tool,
      addedAt: event.at,
      via: event.via,
      ...(event.sessionId ? { sessionId: event.sessionId } : {}),
    }))
    .sort((a, b) => a.project.localeCompare(b.project) || a.tool.localeCompare(b.tool));
}
