import fs from 'node:fs';
import path from 'node:path';
import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import { importMarkOf, isImportedSeq } from '../log/imported.js';
import type { SessionLog } from '../log/sessionLog.js';
import { activeToolRules, appendToolRule, readToolRules, type ToolRule } from '../../store/toolRules.js';

/*
 * The glue between a grant with scope `tool` (an event in one session's log) and the project's rule kept in
 * the home (`store/toolRules.ts`), which later sessions of the project take up as a tool_rules_applied event.
 */

/** Real path of a project folder (what rules and MCP approvals name), or the resolved path if it is gone. */
export function realProjectFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/** The session's project folder, from its session_created. */
function projectOf(log: SessionLog): string {
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  if (created?.kind !== 'session_created') throw new Error(`session ${log.id} has no session_created event`);
  return realProjectFolder(created.projectFolder);
}

/**
 * After a decision was recorded: a grant with scope `tool` becomes the project's rule (appended to the home's
 * tool-rules.jsonl), so later sessions of the project run the tool without asking. Anything else: nothing.
 */
export function keepToolGrant(
  home: string,
  log: SessionLog,
  recorded: SessionEvent,
  request: EventOf<'approval_request'>,
  via: string,
): ToolRule | undefined {
  if (recorded.kind !== 'approval_granted' || recorded.scope !== 'tool') return undefined;
  const event = appendToolRule(home, {
    kind: 'tool_rule_added',
    project: projectOf(log),
    tool: request.tool,
    via,
    sessionId: log.id,
    grantSeq: recorded.seq,
  });
  return { project: event.project, tool: event.tool, addedAt: event.at, via, sessionId: log.id };
}

/** After a `tool` grant was revoked in a session: its project rule is revoked too (later sessions ask again). */
export function forgetToolGrant(
  home: string,
  log: SessionLog,
  grant: { tool: string; scope: string },
  via: string,
): void {
  if (grant.scope !== 'tool') return;
  revokeToolRule(home, projectOf(log), grant.tool, via);
}

/** The tool rules in effect for a project (every project when absent), sorted by project and tool. */
export function listToolRules(home: string, project?: string): ToolRule[] {
  return activeToolRules(readToolRules(home), project === undefined ? undefined : realProjectFolder(project));
}

/**
 * Revokes the project's rule for `tool` (appends tool_rule_revoked). Returns false when no such rule is in
 * effect, so the caller can say so.
 */
export function revokeToolRule(home: string, project: string, tool: string, via: string): boolean {
  const folder = realProjectFolder(project);
  const active = activeToolRules(readToolRules(home), folder).some((rule) => rule.tool === tool);
  if (!active) return false;
  appendToolRule(home, { kind: 'tool_rule_revoked', project: folder, tool, via });
  return true;
}

/**
 * Records in the log the project's tool rules this turn runs under: appends tool_rules_applied when they
 * differ from the newest one made here (an imported one counts for nothing), or when there are rules and none
 * was recorded. Returns the appended event, if any.
 */
export function applyProjectToolRules(
  home: string,
  log: SessionLog,
  projectFolder: string,
): SessionEvent | undefined {
  const project = realProjectFolder(projectFolder);
  const tools = activeToolRules(readToolRules(home), project).map((rule) => rule.tool);
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  const mark = created?.kind === 'session_created' ? importMarkOf(created) : undefined;
  const previous = (
    log.readKinds(['tool_rules_applied'], { validate: false }) as EventOf<'tool_rules_applied'>[]
  )
    .filter((event) => !isImportedSeq(mark, event.seq))
    .at(-1);
  const same = previous ? previous.tools.join('\n') === tools.join('\n') : tools.length === 0;
  if (same) return undefined;
  const event: NewEvent = { kind: 'tool_rules_applied', project, tools };
  const appended = log.append(event);
  return appended.ok ? appended.events[0] : undefined;
}
