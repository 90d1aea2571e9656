import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { decisionOf, permissionOptions } from '../../../main/acp/permissions.js';
import { projectPath, toolLocationsOf, toolTitleOf } from '../../../main/acp/toolCalls.js';
import { replayUpdates } from '../../../main/acp/updates.js';

const request = (tool: string): Extract<SessionEvent, { kind: 'approval_request' }> => ({
  seq: 4,
  at: '2026-01-01T00:00:00.000Z',
  kind: 'approval_request',
  toolCallId: 'c1',
  tool,
  arguments: '{}',
});
const view = {
  project: '/home/dev/app',
  roots: ['/keel/sessions/s/workspace/persistent/project', '/home/dev/app'],
};

describe('acp mapping (pure)', () => {
  it("offers only the scopes Keel takes, and maps the editor's choice back to a decision", () => {
    expect(
      permissionOptions(request('mcp__gh__issue'), ['once', 'session', 'tool']).map((o) => o.optionId),
    ).toEqual(['allow_once', 'allow_session', 'allow_tool_in_project', 'reject', 'reject_always_in_project']);
    // A call whose outcome is unknown can only be re-run once.
    expect(permissionOptions(request('run_command'), ['once']).map((o) => o.kind)).toEqual([
      'allow_once',
      'reject_once',
      'reject_always',
    ]);
    const scopes = ['once', 'session'] as const;
    expect(decisionOf({ outcome: 'selected', optionId: 'allow_session' }, scopes)).toEqual({
      decision: 'grant',
      scope: 'session',
    });
    expect(decisionOf({ outcome: 'selected', optionId: 'reject' }, scopes)).toMatchObject({
      decision: 'deny',
    });
    expect(decisionOf({ outcome: 'selected', optionId: 'reject_always_in_project' }, scopes)).toMatchObject({
      decision: 'deny',
      always: true,
    });
    expect(decisionOf({ outcome: 'cancelled' }, scopes)).toBeUndefined();
    // Issue #32: a web_fetch is offered for its host only, and the answer grants that host.
    expect(
      permissionOptions(request('web_fetch'), ['once', 'domain'], 'docs.example.org').map((o) => o.name),
    ).toEqual([
      'Allow once',
      'Always allow docs.example.org in this session',
      'Reject',
      'Always reject this web_fetch call in this project',
    ]);
    expect(
      decisionOf(
        { outcome: 'selected', optionId: 'allow_host_in_session' },
        ['once', 'domain'],
        'docs.example.org',
      ),
    ).toEqual({ decision: 'grant', scope: 'domain:docs.example.org' });
    // An option Keel did not offer is refused, not widened.
    expect(() => decisionOf({ outcome: 'selected', optionId: 'allow_tool_in_project' }, scopes)).toThrow(
      /did not offer/,
    );
  });

  it('shows project files by their path in the editor, and nothing outside the project', () => {
    expect(projectPath(view, 'src/x.ts')).toBe('/home/dev/app/src/x.ts');
    expect(projectPath(view, '/keel/sessions/s/workspace/persistent/project/src/x.ts')).toBe(
      '/home/dev/app/src/x.ts',
    );
    expect(projectPath(view, '../../etc/passwd')).toBeUndefined();
    expect(projectPath(view, '/etc/passwd')).toBeUndefined();
    expect(projectPath(view, '/session/scratch/notes.md')).toBeUndefined();
    expect(
      toolLocationsOf(
        'apply_patch',
        { input: '*** Begin Patch\n*** Update File: a.ts\n*** Add File: b/c.ts\n' },
        view,
      ),
    ).toEqual([{ path: '/home/dev/app/a.ts' }, { path: '/home/dev/app/b/c.ts' }]);
    expect(toolTitleOf('mcp__github__create_issue', {})).toBe('github: create_issue');
    expect(toolTitleOf('run_command', { command: 'npm\n  test' })).toBe('Run npm test');
  });

  it('replays a log once, in order, a denied call as failed', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const events: SessionEvent[] = [
      { seq: 2, at, kind: 'user_message', content: 'fix it' },
      {
        seq: 3,
        at,
        kind: 'assistant_message',
        content: 'On it.',
        toolCalls: [{ id: 'c1', name: 'write_file', arguments: '{"path":"a.ts","content":"x"}' }],
      },
      { ...request('write_file'), seq: 4 },
      { seq: 5, at, kind: 'approval_denied', requestSeq: 4, reason: 'no' },
    ];
    const updates = replayUpdates(events, { view, contextWindow: 1000 });
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      'user_message_chunk',
      'agent_message_chunk',
      'tool_call',
      'tool_call_update',
      'tool_call_update',
    ]);
    expect(updates[2]).toMatchObject({
      kind: 'edit',
      title: 'Write a.ts',
      locations: [{ path: '/home/dev/app/a.ts' }],
    });
    expect(updates[4]).toMatchObject({ status: 'failed' });
  });
});
