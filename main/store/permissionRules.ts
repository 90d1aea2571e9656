import { z } from 'zod';
import { appendJsonlEvent, readJsonlEvents } from './appendOnlyJsonl.js';

/**
 * `<home>/permission-rules.jsonl`: Keel's own permission rules (`keel rules add`, the settings screen, an
 * approval's "always" choice), one event per line, never rewritten. A rule is in effect while the newest
 * event for its (project, action, rule) adds it. Kept in the home, never in a project, so nothing a model or
 * a clone writes there adds one. A rule without a project holds in every project.
 */
export const PermissionRuleEvent = z.object({
  kind: z.enum(['permission_rule_added', 'permission_rule_removed']),
  /** Real path of the project folder; '' for every project. */
  project: z.string(),
  action: z.enum(['allow', 'ask', 'deny']),
  /** The rule as written (`Bash(npm test:*)`); checked by main/core/approvals/rules.ts before it is added. */
  rule: z.string().min(1),
  /** Who: `keel rules add`, an approval's "always" (`keel approve`, the app), the settings screen. */
  via: z.string().min(1),
  /** The session and grant event an "always" came from, for people reading the file. */
  sessionId: z.string().optional(),
  grantSeq: z.number().int().positive().optional(),
  at: z.string().min(1),
});
export type PermissionRuleEvent = z.infer<typeof PermissionRuleEvent>;

/** A Keel rule in effect. */
export type KeptPermissionRule = Pick<PermissionRuleEvent, 'project' | 'action' | 'rule' | 'via' | 'at'> & {
  sessionId?: string;
};

const FILE = 'permission-rules.jsonl';

/** Appends one rule event (one `O_APPEND` line: concurrent writers never interleave). */
export function appendPermissionRule(
  home: string,
  event: Omit<z.input<typeof PermissionRuleEvent>, 'at'>,
): PermissionRuleEvent {
  return appendJsonlEvent(home, FILE, PermissionRuleEvent, event);
}

/** Every rule event, oldest first; a line that is not a valid event is skipped (it allows nothing). */
export function readPermissionRules(home: string): PermissionRuleEvent[] {
  return readJsonlEvents(home, FILE, PermissionRuleEvent);
}

/**
 * The rules in effect for `project` (its own and every project's), or every rule when `project` is absent, in
 * the order they were added. Pure.
 */
export function activePermissionRules(
  events: readonly PermissionRuleEvent[],
  project?: string,
): KeptPermissionRule[] {
  const newest = new Map<string, PermissionRuleEvent>();
  for (const event of events) {
    if (project !== undefined && event.project !== '' && event.project !== project) continue;
    const key = `${event.project}\n${event.action}\n${event.rule}`;
    newest.delete(key);
    newest.set(key, event);
  }
  return [...newest.values()].filter((event) => event.kind === 'permission_rule_added').map(keptRuleOf);
}

/** A rule event as the rule it keeps (what lists and answers show). */
export function keptRuleOf(event: PermissionRuleEvent): KeptPermissionRule {
  return {
    project: event.project,
    action: event.action,
    rule: event.rule,
    via: event.via,
    at: event.at,
    ...(event.sessionId ? { sessionId: event.sessionId } : {}),
  };
}
