import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import { allowedScopes, decideApproval } from '../../../../main/core/approvals/decide.js';
import type { PendingApproval } from '../../../../main/core/approvals/state.js';
import { policyChangeProblem, toolModeFor } from '../../../../main/core/approvals/policy.js';

/* The one approval decision rule the app (approvals.decide) and the CLI (keel approve / deny) both go through. */

const at = '2031-01-01T00:00:00.000Z';
const request = (seq: number, tool: string, extra: Partial<SessionEvent> = {}): SessionEvent =>
  ({
    seq,
    at,
    kind: 'approval_request',
    toolCallId: `c${seq}`,
    tool,
    arguments: '{}',
    ...extra,
  }) as SessionEvent;

describe('decideApproval', () => {
  it('grants a prefix scope only to a command', () => {
    const events = [request(4, 'write_file'), request(5, 'run_command')];
    expect(decideApproval(events, { requestSeq: 4, decision: 'grant', scope: 'prefix:npm test' })).toEqual({
      ok: false,
      code: 'invalid_input',
      message: 'a prefix scope is for commands; request 4 is a write_file call',
    });
    expect(
      decideApproval(events, { requestSeq: 5, decision: 'grant', scope: 'prefix:npm test' }),
    ).toMatchObject({
      ok: true,
      event: { kind: 'approval_granted', requestSeq: 5, scope: 'prefix:npm test' },
    });
  });

  it('grants a path scope only to a file change, and says which scopes each request may take', () => {
    const events = [request(4, 'write_file'), request(5, 'run_command'), request(6, 'spawn_subagent')];
    expect(decideApproval(events, { requestSeq: 5, decision: 'grant', scope: 'path:src/**' })).toEqual({
      ok: false,
      code: 'invalid_input',
      message: 'a path scope is for file changes; request 5 is a run_command call',
    });
    expect(decideApproval(events, { requestSeq: 4, decision: 'grant', scope: 'path:src/**' })).toMatchObject({
      ok: true,
    });
    const [write, command, subagent] = events as PendingApproval[];
    expect([write, command, subagent].map((entry) => allowedScopes(entry as PendingApproval))).toEqual([
      ['once', 'session', 'path'],
      ['once', 'session', 'prefix'],
      ['once', 'session'],
    ]);
  });

  it('approves a call whose outcome is unknown only once, and denies it with the reason', () => {
    const events = [request(7, 'run_command', { unknownOutcome: true })];
    expect(decideApproval(events, { decision: 'grant', scope: 'session' })).toEqual({
      ok: false,
      code: 'invalid_input',
      message: 'request 7 re-runs a call whose outcome is unknown: only the scope "once" applies',
    });
    expect(decideApproval(events, { decision: 'grant', scope: 'once' })).toMatchObject({ ok: true });
    expect(decideApproval(events, { decision: 'deny', reason: 'already ran' })).toMatchObject({
      ok: true,
      event: { kind: 'approval_denied', requestSeq: 7, reason: 'already ran' },
    });
  });

  it('refuses a decided request and an ambiguous one as the log says', () => {
    const decided: SessionEvent[] = [
      request(2, 'edit_file'),
      { seq: 3, at, kind: 'approval_granted', requestSeq: 2, scope: 'once' },
      request(4, 'edit_file'),
      request(5, 'edit_file'),
    ];
    expect(decideApproval(decided, { requestSeq: 2, decision: 'deny' })).toEqual({
      ok: false,
      code: 'invalid_state',
      message: 'approval request 2 was already decided',
    });
    expect(decideApproval(decided, { decision: 'deny' })).toMatchObject({ ok: false, code: 'invalid_state' });
  });
});

describe('the tool set a policy allows', () => {
  it('gives a read-only session the read-only registry whatever was asked, and keeps it read-only', () => {
    expect(toolModeFor('read-only', 'write')).toBe('read-only');
    expect(toolModeFor('ask')).toBe('write');
    expect(toolModeFor('full-auto', 'read-only')).toBe('read-only');
    expect(policyChangeProblem('read-only', 'auto-edit')).toMatch(
      /created read-only: its tool set has no write tools/,
    );
    expect(policyChangeProblem('read-only', 'read-only')).toBeUndefined();
    expect(policyChangeProblem('write', 'read-only')).toBeUndefined();
  });
});
