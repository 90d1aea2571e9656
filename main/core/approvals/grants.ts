import picomatch from 'picomatch';
import type { ApprovalScope, EventOf, SessionEvent } from '../../common/events.js';
import { importMarkOf, isImportedSeq, type ImportMark } from '../log/imported.js';
import { outsidePrefix } from './commandFlags.js';

/** A grant in effect: which request it answered, for which tool, with which scope. */
export type ActiveGrant = { seq: number; requestSeq: number; tool: string; scope: ApprovalScope };

/**
 * A call as the gate sees it: the tool and, where they apply, its workspace-relative path or command; a call
 * on several files (apply_patch) gives them all as `paths`.
 */
export type GatedCall = {
  tool: string;
  path?: string;
  paths?: readonly string[];
  command?: string;
  /** The host a web_fetch call reaches. */
  host?: string;
};

/** The import mark of the session whose log `events` is (its first event), or undefined. */
function importMarkOfLog(events: readonly SessionEvent[]): ImportMark | undefined {
  const first = events[0];
  return first?.kind === 'session_created' ? importMarkOf(first) : undefined;
}

/**
 * True when `grant` (an approval_granted of the session whose whole log is `events`, or whose mark is
 * given) came from an imported file: a record of someone's decision elsewhere, in effect nowhere here.
 */
export function isImportedGrant(mark: ImportMark | undefined, grant: { seq: number }): boolean {
  return isImportedSeq(mark, grant.seq);
}

/**
 * The grants in effect after `events` (a session's log from its session_created): every approval_granted
 * except `once` grants (they authorise only their own request), grants later revoked, and grants that came
 * from an imported file (inactive until granted again here). Pure; re-read from the log on every resume.
 */
export function activeGrants(events: readonly SessionEvent[]): ActiveGrant[] {
  const mark = importMarkOfLog(events);
  const requests = new Map<number, EventOf<'approval_request'>>();
  const grants = new Map<number, ActiveGrant>();
  for (const event of events) {
    if (event.kind === 'approval_request') requests.set(event.seq, event);
    else if (event.kind === 'approval_granted' && event.scope !== 'once' && !isImportedGrant(mark, event)) {
      const request = requests.get(event.requestSeq);
      if (request)
        grants.set(event.seq, {
          seq: event.seq,
          requestSeq: event.requestSeq,
          tool: request.tool,
          scope: event.scope,
        });
    } else if (event.kind === 'approval_revoked') grants.delete(event.grantSeq);
    else if (event.kind === 'tool_rules_applied' && !isImportedSeq(mark, event.seq)) {
      for (const seq of toolGrantsEndedBy(event, grants.values())) grants.delete(seq);
    }
  }
  return [...grants.values()];
}

/**
 * The seqs of `tool` grants a tool_rules_applied ends: their tool is no longer among the project's rules (a
 * person revoked the rule), so this session asks again too. Pure.
 */
export function toolGrantsEndedBy(
  event: EventOf<'tool_rules_applied'>,
  grants: Iterable<{ seq: number; tool: string; scope: ApprovalScope }>,
): number[] {
  const kept = new Set(event.tools);
  return [...grants]
    .filter((grant) => grant.scope === 'tool' && grant.seq < event.seq && !kept.has(grant.tool))
    .map((grant) => grant.seq);
}

/**
 * The project's rules a tool_rules_applied put in effect, as grants of scope `tool` (named by that event's
 * seq): every later call of those tools runs without asking.
 */
export function ruleGrants(event: EventOf<'tool_rules_applied'> | undefined): ActiveGrant[] {
  if (!event) return [];
  return event.tools.map((tool) => ({ seq: event.seq, requestSeq: event.seq, tool, scope: 'tool' as const }));
}

// Anything that could chain or substitute a second command after an approved prefix.
const SHELL_CONTROL = /[;&|`$()<>\n\r\\]/;

/**
 * True when `command` is the granted prefix, or the prefix followed by plain arguments (no chaining, so a
 * compound command never matches and every command the shell runs is the one checked here) that stay inside
 * it: none of the program's own ways to run a command or write elsewhere (`find -exec`, `sed -i`, `git -c`,
 * `npm exec`, `sh -c`; commandFlags.ts) unless the prefix names them.
 */
export function commandMatchesPrefix(command: string, prefix: string): boolean {
  return prefixMiss(command, prefix) === undefined;
}

/** Why a grant for `prefix` does not cover `command` ('no match' when it does not even start with it). */
function prefixMiss(command: string, prefix: string): string | undefined {
  const trimmed = command.trim();
  const wanted = prefix.trim();
  if (!wanted || SHELL_CONTROL.test(trimmed)) return 'no match';
  if (trimmed !== wanted && !trimmed.startsWith(`${wanted} `)) return 'no match';
  return outsidePrefix(trimmed, wanted);
}

/**
 * For a command no grant covers: why the first prefix grant it starts with does not (its flag or
 * subcommand that runs a command or writes), to tell the person asked; undefined when none starts it.
 */
export function prefixGrantGap(command: string, grants: readonly ActiveGrant[]): string | undefined {
  for (const grant of grants) {
    if (!grant.scope.startsWith('prefix:')) continue;
    const prefix = grant.scope.slice('prefix:'.length);
    const why = prefixMiss(command, prefix);
    if (why !== undefined && why !== 'no match')
      return `the grant for "${prefix.trim()}" does not cover this: ${why}`;
  }
  return undefined;
}

/** The command's first word, and its second unless that is an option: what a prefix grant would usually name. */
export function suggestPrefix(command: string): string | undefined {
  const trimmed = command.trim();
  if (trimmed === '') return undefined;
  const words = trimmed.split(/\s+/);
  const plain = (word: string | undefined): word is string => word !== undefined && !SHELL_CONTROL.test(word);
  const [first, second] = words;
  if (!plain(first)) return undefined;
  return plain(second) && !second.startsWith('-') ? `${first} ${second}` : first;
}

/**
 * The grant that pre-authorises `call`, if any: same tool for `session` and `tool`, glob match for `path:`,
 * prefix for `prefix:`.
 */
export function findGrant(call: GatedCall, grants: readonly ActiveGrant[]): ActiveGrant | undefined {
  return grants.find((grant) => {
    if (grant.scope === 'session' || grant.scope === 'tool') return grant.tool === call.tool;
    if (grant.scope.startsWith('path:')) {
      const matches = picomatch(grant.scope.slice('path:'.length), { dot: true });
      // Several files: the grant covers the call only when it covers every one of them.
      if (call.paths !== undefined) return call.paths.length > 0 && call.paths.every((p) => matches(p));
      if (call.path === undefined) return false;
      return matches(call.path);
    }
    if (grant.scope.startsWith('domain:')) {
      return (
        grant.tool === call.tool &&
        call.host !== undefined &&
        call.host === grant.scope.slice('domain:'.length)
      );
    }
    if (grant.scope.startsWith('prefix:')) {
      return (
        call.command !== undefined && commandMatchesPrefix(call.command, grant.scope.slice('prefix:'.length))
      );
    }
    return false;
  });
}

/** A grant as a person reviews it: what it allows, when it was granted, and its revocation if any. */
export type GrantRecord = ActiveGrant & {
  grantedAt: string;
  /** The model's call id of the request the grant answered. */
  toolCallId: string;
  /** One sentence: which future calls the grant pre-authorises. */
  allows: string;
  revoked?: { seq: number; at: string; reason?: string };
};

/** One sentence saying which calls a grant of `scope` (answering a `tool` request) pre-authorises, as findGrant matches them. */
export function describeGrantScope(tool: string, scope: ApprovalScope): string {
  if (scope === 'once') return `only the one ${tool} call it answered`;
  if (scope === 'session') return `every ${tool} call in this session`;
  if (scope === 'tool') {
    return `every ${tool} call in this session and in later sessions of this project (a rule kept until revoked: keel mcp rules)`;
  }
  if (scope.startsWith('path:')) {
    return `any tool call on a workspace path matching ${scope.slice('path:'.length)} (protected paths still ask)`;
  }
  if (scope.startsWith('domain:'))
    return `every ${tool} call to the host ${scope.slice('domain:'.length)} in this session`;
  if (scope.startsWith('prefix:')) {
    const prefix = scope.slice('prefix:'.length).trim();
    return (
      `commands that are "${prefix}" or "${prefix}" followed by plain arguments (no ; & | $ ( ) < > or backslash), ` +
      'not options that run another command or write elsewhere (find -exec, sed -i, git -c, npm exec, sh -c)'
    );
  }
  return scope;
}

/**
 * Every grant wider than `once` made in this home, in the order granted, each with what it allows and,
 * when an approval_revoked names it, its revocation. The ones without `revoked` are exactly
 * `activeGrants(events)`; grants that came from an imported file are no grants here and are not listed.
 */
export function listGrants(events: readonly SessionEvent[]): GrantRecord[] {
  const mark = importMarkOfLog(events);
  const requests = new Map<number, EventOf<'approval_request'>>();
  const grants = new Map<number, GrantRecord>();
  for (const event of events) {
    if (event.kind === 'approval_request') requests.set(event.seq, event);
    else if (event.kind === 'approval_granted' && event.scope !== 'once' && !isImportedGrant(mark, event)) {
      const request = requests.get(event.requestSeq);
      if (!request) continue;
      grants.set(event.seq, {
        seq: event.seq,
        requestSeq: event.requestSeq,
        tool: request.tool,
        scope: event.scope,
        grantedAt: event.at,
        toolCallId: request.toolCallId,
        allows: describeGrantScope(request.tool, event.scope),
      });
    } else if (event.kind === 'approval_revoked') {
      const grant = grants.get(event.grantSeq);
      if (grant && !grant.revoked) {
        grant.revoked = { seq: event.seq, at: event.at, ...(event.reason ? { reason: event.reason } : {}) };
      }
    } else if (event.kind === 'tool_rules_applied' && !isImportedSeq(mark, event.seq)) {
      const live = [...grants.values()].filter((grant) => !grant.revoked);
      for (const seq of toolGrantsEndedBy(event, live)) {
        const grant = grants.get(seq);
        if (grant) grant.revoked = { seq: event.seq, at: event.at, reason: 'its project rule was revoked' };
      }
    }
  }
  return [...grants.values()];
}

/**
 * Whether `grantSeq` may be revoked now: it must be a grant wider than `once` that is still in effect.
 * Returns the grant, or an error a person can act on. Pure; the caller appends approval_revoked.
 */
export function checkRevocation(
  events: readonly SessionEvent[],
  grantSeq: number,
): { ok: true; grant: GrantRecord } | { ok: false; error: string } {
  const event = events.find((candidate) => candidate.seq === grantSeq);
  if (event?.kind !== 'approval_granted') {
    return { ok: false, error: `event ${grantSeq} is not a grant (keel grants SESSION lists them)` };
  }
  if (event.scope === 'once') {
    return {
      ok: false,
      error: `grant ${grantSeq} was for once: it authorised only its own request and is not in effect`,
    };
  }
  if (isImportedGrant(importMarkOfLog(events), event)) {
    return {
      ok: false,
      error: `grant ${grantSeq} came with the imported file: it was never in effect here`,
    };
  }
  const grant = listGrants(events).find((candidate) => candidate.seq === grantSeq);
  if (!grant) return { ok: false, error: `grant ${grantSeq} answers no approval request in this session` };
  if (grant.revoked) {
    return { ok: false, error: `grant ${grantSeq} was already revoked (event ${grant.revoked.seq})` };
  }
  return { ok: true, grant };
}
