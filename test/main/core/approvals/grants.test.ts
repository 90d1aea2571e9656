import { describe, expect, it } from 'vitest';
import {
  activeGrants,
  checkRevocation,
  describeGrantScope,
  findGrant,
  listGrants,
} from '../../../../main/core/approvals/grants.js';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';

function log(events: NewEvent[]): SessionEvent[] {
  const created = {
    kind: 'session_created',
    sessionId: 's',
    projectFolder: '/p',
    provider: 'openai-compatible',
    model: 'm',
    contextWindow: 8000,
    toolMode: 'write',
    policy: 'ask',
  } as NewEvent;
  return [created, ...events].map((event, index) => ({
    ...event,
    seq: index + 1,
    at: `2025-01-01T00:00:0${index}.000Z`,
  }));
}

const request = (toolCallId: string, tool: string): NewEvent => ({
  kind: 'approval_request',
  toolCallId,
  tool,
  arguments: '{}',
});

// seq 2..8: a path grant (3), a once grant (5), a prefix grant (7), then the path grant revoked (8).
const events = log([
  request('c1', 'write_file'),
  { kind: 'approval_granted', requestSeq: 2, scope: 'path:notes/**' },
  request('c2', 'edit_file'),
  { kind: 'approval_granted', requestSeq: 4, scope: 'once' },
  request('c3', 'run_command'),
  { kind: 'approval_granted', requestSeq: 6, scope: 'prefix:npm test' },
  { kind: 'approval_revoked', grantSeq: 3, reason: 'too broad' },
]);

describe('listGrants', () => {
  it('lists grants wider than once with what they allow, when granted, and their revocation', () => {
    const grants = listGrants(events);
    expect(grants.map((g) => [g.seq, g.tool, g.scope, g.toolCallId])).toEqual([
      [3, 'write_file', 'path:notes/**', 'c1'],
      [7, 'run_command', 'prefix:npm test', 'c3'],
    ]);
    expect(grants[0]).toMatchObject({
      grantedAt: '2025-01-01T00:00:02.000Z',
      revoked: { seq: 8, at: '2025-01-01T00:00:07.000Z', reason: 'too broad' },
    });
    expect(grants[0]?.allows).toContain('notes/**');
    expect(grants[1]?.revoked).toBeUndefined();
  });

  it('the grants not revoked are exactly the active grants, and a revoked path grant no longer matches', () => {
    const inEffect = listGrants(events)
      .filter((g) => !g.revoked)
      .map(({ seq, requestSeq, tool, scope }) => ({ seq, requestSeq, tool, scope }));
    expect(inEffect).toEqual(activeGrants(events));
    expect(findGrant({ tool: 'write_file', path: 'notes/a.md' }, activeGrants(events))).toBeUndefined();
    expect(
      findGrant({ tool: 'write_file', path: 'notes/a.md' }, activeGrants(events.slice(0, 7))),
    ).toMatchObject({
      seq: 3,
    });
  });
});

describe('checkRevocation', () => {
  it('accepts a grant in effect and refuses what is not one, with a reason', () => {
    expect(checkRevocation(events, 7)).toMatchObject({ ok: true, grant: { seq: 7, tool: 'run_command' } });
    expect(checkRevocation(events, 3)).toEqual({
      ok: false,
      error: 'grant 3 was already revoked (event 8)',
    });
    const errorOf = (seq: number) => {
      const checked = checkRevocation(events, seq);
      return checked.ok ? 'accepted' : checked.error;
    };
    expect(errorOf(5)).toMatch(/was for once/);
    expect(errorOf(2)).toMatch(/not a grant/);
    expect(errorOf(99)).toMatch(/not a grant/);
  });
});

describe('describeGrantScope', () => {
  it('says what each scope lets through', () => {
    expect(describeGrantScope('write_file', 'session')).toBe('every write_file call in this session');
    expect(describeGrantScope('run_command', 'prefix:npm test')).toMatch(
      /"npm test" followed by plain arguments/,
    );
    expect(describeGrantScope('edit_file', 'once')).toMatch(/only the one edit_file call/);
  });
});

describe('findGrant for a call on several files (apply_patch)', () => {
  const grants = activeGrants(
    log([request('p1', 'apply_patch'), { kind: 'approval_granted', requestSeq: 2, scope: 'path:src/**' }]),
  );

  it('a path grant covers the call only when it covers every path', () => {
    expect(findGrant({ tool: 'apply_patch', paths: ['src/a.ts', 'src/b/c.ts'] }, grants)?.seq).toBe(3);
    expect(findGrant({ tool: 'apply_patch', paths: ['src/a.ts', 'package.json'] }, grants)).toBeUndefined();
    expect(findGrant({ tool: 'apply_patch', paths: [] }, grants)).toBeUndefined();
  });

  it('a path grant answering a write_file request covers a patch the same way: every path or none', () => {
    const fromWrite = activeGrants(
      log([request('w1', 'write_file'), { kind: 'approval_granted', requestSeq: 2, scope: 'path:src/**' }]),
    );
    expect(findGrant({ tool: 'apply_patch', paths: ['src/a.ts'] }, fromWrite)?.seq).toBe(3);
    expect(findGrant({ tool: 'apply_patch', paths: ['src/a.ts', 'docs/x.md'] }, fromWrite)).toBeUndefined();
  });
});
