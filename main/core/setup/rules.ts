import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import type { PermissionRuleSource, SetupProblem } from '../../common/setup.js';
import {
  activePermissionRules,
  appendPermissionRule,
  keptRuleOf,
  readPermissionRules,
  type KeptPermissionRule,
} from '../../store/permissionRules.js';
import { namesNoTool, parseRule, type RuleAction } from '../approvals/rules.js';
import { importMarkOf, isImportedSeq } from '../log/imported.js';
import type { SessionLog } from '../log/sessionLog.js';
import { approvedSetup, readApprovedBytes, readSetupApprovals } from '../../store/setupApprovals.js';
import { LOCATIONS } from './discover.js';
import { loadSetup, type LoadedSetup, type SetupFile } from './load.js';
import { parseSetupText } from './parse.js';
import { RulesError } from './errors.js';

export { RulesError };

/*
 * The permission rules in effect for a project: the `permissions` of the user's settings files, of the
 * project's approved ones, and Keel's own rules (`<home>/permission-rules.jsonl`). A turn records them in its
 * log (permission_rules_applied) so the gate, the session view and a resume read the same list.
 */

const ACTIONS: readonly RuleAction[] = ['deny', 'ask', 'allow'];

/** The rules in effect and, for the person, the project's rules still waiting for `keel trust`. */
export type RulesReport = {
  project: string;
  rules: PermissionRuleSource[];
  /** Rules in project files not approved (yet): they have no effect. */
  untrusted: PermissionRuleSource[];
  /** Keel's own rules as kept (to remove one). */
  kept: KeptPermissionRule[];
  /** Settings files ignored whole, with their line. */
  problems: SetupProblem[];
  /** Rules that name no tool Keel has (kept, they match nothing). */
  inert: string[];
};

/** Where a settings file's rule came from, as the person reads it. */
function sourceOf(file: SetupFile): string {
  return file.scope === 'user' ? `user ~/${file.relativePath}` : `project ${file.relativePath}`;
}

function rulesOf(files: readonly SetupFile[]): PermissionRuleSource[] {
  const rules: PermissionRuleSource[] = [];
  for (const file of files) {
    if (file.kind !== 'settings') continue;
    const permissions = file.json?.permissions as Partial<Record<RuleAction, string[]>> | undefined;
    for (const action of ACTIONS) {
      for (const rule of permissions?.[action] ?? []) rules.push({ action, rule, source: sourceOf(file) });
    }
  }
  return rules;
}

const SETTINGS_PATHS = new Set(
  LOCATIONS.filter((location) => location.kind === 'settings').map(
    (location) => `${location.dir}/${location.name ?? ''}`,
  ),
);

/**
 * The deny and ask rules of project settings files as last approved, for each such file changed or removed
 * since: a change (by a clone's pull, or by a command in the box) waits for approval before it can add
 * anything, and must not take a refusal away meanwhile either.
 */
function approvedRestrictions(home: string, setup: LoadedSetup): PermissionRuleSource[] {
  const approval = setup.project ? approvedSetup(readSetupApprovals(home), setup.project) : null;
  if (!approval) return [];
  const inEffect = new Map(
    setup.files.filter((file) => file.scope === 'project').map((file) => [file.relativePath, file.hash]),
  );
  const rules: PermissionRuleSource[] = [];
  for (const [relativePath, hash] of approval.hashes) {
    if (!SETTINGS_PATHS.has(relativePath) || inEffect.get(relativePath) === hash) continue;
    const bytes = readApprovedBytes(home, hash);
    if (bytes === undefined) continue;
    const parsed = parseSetupText('settings', relativePath, bytes.toString('utf8'));
    const permissions = parsed.ok
      ? (parsed.json?.permissions as Partial<Record<RuleAction, string[]>> | undefined)
      : undefined;
    for (const action of ['deny', 'ask'] as const) {
      for (const rule of permissions?.[action] ?? []) {
        rules.push({ action, rule, source: `project ${relativePath} as approved (changed since)` });
      }
    }
  }
  return rules;
}

/** Every rule in effect for `project` (and those waiting for approval), with where each came from. */
export function projectRules(options: { home: string; userHome?: string; project: string }): RulesReport {
  const setup = loadSetup(options);
  const kept = activePermissionRules(readPermissionRules(options.home), setup.project || options.project);
  const keel = kept.map((rule) => ({
    action: rule.action,
    rule: rule.rule,
    source: rule.sessionId ? `keel (always, from session ${rule.sessionId})` : 'keel',
  }));
  const rules = [...rulesOf(setup.files), ...approvedRestrictions(options.home, setup), ...keel];
  return {
    project: setup.project || options.project,
    rules,
    untrusted: rulesOf(setup.untrusted),
    kept,
    problems: setup.problems.filter((problem) => problem.path.endsWith('.json')),
    inert: rules.filter((rule) => namesNoTool(rule.rule)).map((rule) => rule.rule),
  };
}

/**
 * Records in the log the rules this turn runs under: appends permission_rules_applied when they differ from
 * the newest one made here (an imported one counts for nothing), or when there are rules and none was
 * recorded. Returns the appended event, if any.
 */
export function applyPermissionRules(
  log: SessionLog,
  options: { home: string; userHome?: string; project: string },
): SessionEvent | undefined {
  const report = projectRules(options);
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  const mark = created?.kind === 'session_created' ? importMarkOf(created) : undefined;
  const previous = (
    log.readKinds(['permission_rules_applied'], { validate: false }) as EventOf<'permission_rules_applied'>[]
  )
    .filter((event) => !isImportedSeq(mark, event.seq))
    .at(-1);
  const same = previous
    ? JSON.stringify(previous.rules) === JSON.stringify(report.rules)
    : report.rules.length === 0;
  if (same) return undefined;
  const event: NewEvent = {
    kind: 'permission_rules_applied',
    project: report.project,
    userHome: options.userHome ?? '',
    rules: report.rules,
  };
  const appended = log.append(event);
  return appended.ok ? appended.events[0] : undefined;
}

/** Adds one of Keel's own rules (for `project`, or every project when ''); throws RulesError for a bad rule. */
export function addKeelRule(
  home: string,
  rule: {
    project: string;
    action: RuleAction;
    rule: string;
    via: string;
    sessionId?: string;
    grantSeq?: number;
  },
): KeptPermissionRule {
  const parsed = parseRule(rule.rule);
  if (!parsed.ok) throw new RulesError(parsed.message);
  const event = appendPermissionRule(home, {
    kind: 'permission_rule_added',
    ...rule,
    rule: rule.rule.trim(),
  });
  return keptRuleOf(event);
}

/**
 * Removes one of Keel's own rules. A rule that comes from a settings file is not Keel's to remove: the error
 * names the file to edit.
 */
export function removeKeelRule(
  home: string,
  options: {
    project: string;
    userHome?: string;
    rule: string;
    action?: RuleAction;
    via: string;
    /** Only a rule an "always" of this session kept. */
    fromSession?: string;
  },
): KeptPermissionRule[] {
  const report = projectRules({
    home,
    project: options.project,
    ...(options.userHome ? { userHome: options.userHome } : {}),
  });
  const matches = report.kept.filter(
    (kept) =>
      kept.rule === options.rule.trim() &&
      (options.action === undefined || kept.action === options.action) &&
      (options.fromSession === undefined || kept.sessionId === options.fromSession),
  );
  if (matches.length === 0) {
    const fromFile = report.rules.find(
      (rule) => rule.rule === options.rule.trim() && !rule.source.startsWith('keel'),
    );
    throw new RulesError(
      fromFile
        ? `"${options.rule}" comes from ${fromFile.source}: edit that file to remove it`
        : `no Keel rule "${options.rule}" is in effect here (keel rules list shows them)`,
    );
  }
  for (const kept of matches) {
    appendPermissionRule(home, {
      kind: 'permission_rule_removed',
      project: kept.project,
      action: kept.action,
      rule: kept.rule,
      via: options.via,
    });
  }
  return matches;
}

/**
 * A subagent runs under its parent's rules: appends to the child's log the parent's newest
 * permission_rules_applied (not an imported one) when the child's newest differs. Returns the appended event.
 */
export function inheritPermissionRules(parent: SessionLog, child: SessionLog): SessionEvent | undefined {
  const newest = (log: SessionLog) => {
    const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
    const mark = created?.kind === 'session_created' ? importMarkOf(created) : undefined;
    return (
      log.readKinds(['permission_rules_applied'], {
        validate: false,
      }) as EventOf<'permission_rules_applied'>[]
    )
      .filter((event) => !isImportedSeq(mark, event.seq))
      .at(-1);
  };
  const theirs = newest(parent);
  if (!theirs) return undefined;
  const mine = newest(child);
  if (mine && JSON.stringify(mine.rules) === JSON.stringify(theirs.rules)) return undefined;
  const appended = child.append({
    kind: 'permission_rules_applied',
    project: theirs.project,
    userHome: theirs.userHome,
    rules: theirs.rules,
  });
  return appended.ok ? appended.events[0] : undefined;
}
