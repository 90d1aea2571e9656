import picomatch from 'picomatch';
import type { ApprovalScope, EventOf, SessionEvent } from '../log/events.js';

/** A grant in effect: which request it answered, for which tool, with which scope. */
export type ActiveGrant = { seq: number; requestSeq: number; tool: string; scope: ApprovalScope };

/** A call as the gate sees it: the tool and, where they apply, its workspace-relative path or command. */
export type GatedCall = { tool: string; path?: string; command?: string };

/**
 * The grants in effect after `events`: every approval_granted except `once` grants (they authorise only
 * their own request) and grants later revoked. Pure; re-read from the log on every resume.
 */
export function activeGrants(events: readonly SessionEvent[]): ActiveGrant[] {
  const requests = new Map<number, EventOf<'approval_request'>>();
  const grants = new Map<number, ActiveGrant>();
  for (const event of events) {
    if (event.kind === 'approval_request') requests.set(event.seq, event);
    else if (event.kind === 'approval_granted' && event.scope !== 'once') {
      const request = requests.get(event.requestSeq);
      if (request)
        grants.set(event.seq, {
          seq: event.seq,
          requestSeq: event.requestSeq,
          tool: request.tool,
          scope: event.scope,
        });
    } else if (event.kind === 'approval_revoked') grants.delete(event.grantSeq);
  }
  return [...grants.values()];
}

// Anything that could chain or substitute a second command after an approved prefix.
const SHELL_CONTROL = /[;&|`$()<>\n\r\\]/;

/** True when `command` is the granted prefix, or the prefix followed by plain arguments (no chaining). */
export function commandMatchesPrefix(command: string, prefix: string): boolean {
  const trimmed = command.trim();
  const wanted = prefix.trim();
  if (!wanted || SHELL_CONTROL.test(trimmed)) return false;
  return trimmed === wanted || trimmed.startsWith(`${wanted} `);
}

/** The grant that pre-authorises `call`, if any: same tool for `session`, glob match for `path:`, prefix for `prefix:`. */
export function findGrant(call: GatedCall, grants: readonly ActiveGrant[]): ActiveGrant | undefined {
  return grants.find((grant) => {
    if (grant.scope === 'session') return grant.tool === call.tool;
    if (grant.scope.startsWith('path:')) {
      if (call.path === undefined) return false;
      return picomatch(grant.scope.slice('path:'.length), { dot: true })(call.path);
    }
    if (grant.scope.startsWith('prefix:')) {
      return (
        call.command !== undefined && commandMatchesPrefix(call.command, grant.scope.slice('prefix:'.length))
      );
    }
    return false;
  });
}
