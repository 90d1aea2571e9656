import { describe, expect, it } from 'vitest';
import { turnNotification } from '../../../main/common/notifications.js';
import {
  createApprovalBadge,
  requestAttention,
  waitingAfter,
  type AttentionWindow,
} from '../../../main/electron/attention.js';
import type { Push } from '../../../main/ipc/hub.js';

// Issue #32: which turn endings call for the person, and the window's attention request for them.

const ALL = { approval: true, finished: true, failed: true };

describe('turnNotification', () => {
  it('is due for an approval, an end and a failure while unfocused; never for a stop or while focused', () => {
    const unfocused = { title: 'S', focused: false, settings: ALL };
    expect(turnNotification({ status: 'awaiting_approval', pendingSeqs: [4] }, unfocused)?.kind).toBe(
      'approval',
    );
    expect(turnNotification({ status: 'completed' }, unfocused)?.kind).toBe('finished');
    expect(turnNotification({ status: 'failed', error: 'rate limited' }, unfocused)).toEqual({
      kind: 'failed',
      title: 'S',
      body: 'The turn failed: rate limited',
    });
    expect(turnNotification({ status: 'budget_exhausted', steps: 50 }, unfocused)?.kind).toBe('failed');
    expect(turnNotification({ status: 'interrupted' }, unfocused)).toBeUndefined();
    expect(turnNotification({ status: 'completed' }, { ...unfocused, focused: true })).toBeUndefined();
    expect(
      turnNotification({ status: 'completed' }, { ...unfocused, settings: { ...ALL, finished: false } }),
    ).toBeUndefined();
  });
});

describe('requestAttention', () => {
  const window = (focused: boolean) => {
    const flashes: boolean[] = [];
    const win: AttentionWindow = { isFocused: () => focused, flashFrame: (flag) => void flashes.push(flag) };
    return { win, flashes };
  };
  const status = (outcome: Extract<Push, { topic: 'session.status' }>['payload']['outcome']): Push => ({
    topic: 'session.status',
    payload: { sessionId: 's', status: 'idle', running: false, ...(outcome ? { outcome } : {}) },
  });

  it('flashes an unfocused window and bounces the dock for a turn that needs the person', () => {
    const { win, flashes } = window(false);
    const bounces: string[] = [];
    const dock = { bounce: (type: 'informational' | 'critical') => bounces.push(type) };
    expect(requestAttention(status({ status: 'awaiting_approval', pendingSeqs: [3] }), win, dock, ALL)).toBe(
      true,
    );
    expect(flashes).toEqual([true]);
    expect(bounces).toEqual(['critical']);
  });

  it('leaves a focused window, a stop, a kind switched off and other pushes alone', () => {
    const focused = window(true);
    expect(requestAttention(status({ status: 'completed' }), focused.win, undefined, ALL)).toBe(false);
    const unfocused = window(false);
    expect(requestAttention(status({ status: 'interrupted' }), unfocused.win, undefined, ALL)).toBe(false);
    expect(
      requestAttention(status({ status: 'completed' }), unfocused.win, undefined, {
        ...ALL,
        finished: false,
      }),
    ).toBe(false);
    expect(requestAttention(status(undefined), unfocused.win, undefined, ALL)).toBe(false);
    expect(unfocused.flashes).toEqual([]);
  });
});

describe('the approval badge', () => {
  const push = (sessionId: string, status: 'awaiting_approval' | 'running' | 'idle'): Push => ({
    topic: 'session.status',
    payload: { sessionId, status, running: status === 'running' },
  });

  it('counts the sessions waiting on an approval, set only when the count changes', () => {
    const counts: number[] = [];
    const badge = createApprovalBadge({ setBadgeCount: (count) => (counts.push(count), true) });
    badge(push('a', 'awaiting_approval'));
    badge(push('a', 'awaiting_approval'));
    badge(push('b', 'awaiting_approval'));
    badge({ topic: 'sessions.changed', payload: { sessionId: 'a', change: 'updated' } });
    badge(push('a', 'running'));
    badge(push('c', 'idle'));
    badge(push('b', 'idle'));
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it('waitingAfter leaves the set as it was for a push that changes nothing', () => {
    const waiting = new Set(['a']);
    expect(waitingAfter(waiting, push('a', 'awaiting_approval'))).toBe(waiting);
    expect([...waitingAfter(waiting, push('a', 'idle'))]).toEqual([]);
  });
});
