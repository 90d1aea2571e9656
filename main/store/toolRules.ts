import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

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

/** Appends one rule event (a single `O_APPEND` write of one line, so concurrent writers never interleave). */
export function appendToolRule(
  home: string,
  event: Omit<z.input<typeof ToolRuleEvent>, 'at'>,
): ToolRuleEvent {
  const full = ToolRuleEvent.parse({ ...event, at: new Date().toISOString() });
  fs.mkdirSync(home, { recursive: true });
  fs.appendFileSync(path.join(home, FILE), `${JSON.stringify(full)}\n`, { mode: 0o600 });
  return full;
}

/** Every rule event, oldest first; a line that is not a valid event is skipped (it allows nothing). */
export function readToolRules(home: string): ToolRuleEvent[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home, FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const events: ToolRuleEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = ToolRuleEvent.safeParse(JSON.parse(line));
      if (parsed.success) events.push(parsed.data);
    } catch {
      // A torn or hand-edited line allows nothing.
    }
  }
  return events;
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
