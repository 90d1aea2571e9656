import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideApproval } from '../../../../main/core/harness/approvals.js';
import { withWritableSession } from '../../../../main/core/harness/lock.js';
import { decidePlan, pendingPlans, setPlanMode } from '../../../../main/core/harness/plan.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { foldSession } from '../../../../main/core/turn/state.js';
import { PLAN_MODE_LINE } from '../../../../main/core/prompts/environment.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, eventsOf, harnessFor, read, toolResultsSeen } from '../harness/support.js';

/*
 * Issue #30, plan mode through the front door (streamHarness, decidePlan, setPlanMode) on the scripted provider
 * server: a plan turn reads, is refused a write, presents a plan and waits; the user's decision (an event) either
 * switches the policy and the turn implements the plan, or sends it back with comments and the model revises it.
 */

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-plan-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export const a = 1;\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A harness whose sessions start in `ask` (no harness-wide policy re-applied each turn). */
async function planSession(id: string) {
  const harness = harnessFor(home, server, { project }, { policy: undefined });
  await harness.sessions.getOrCreate({ id, create: { policy: 'ask' } });
  return harness;
}

const body = (index: number) => JSON.stringify(server.requests[index]?.body);
const PLAN = '# Plan\n\n1. Add `src/b.ts` exporting `b`.';

/** A plan turn: a read and a write in one reply, then present_plan; returns the outcome. */
async function planTurn(harness: ReturnType<typeof harnessFor>, id: string) {
  server.enqueue({
    kind: 'reply',
    toolCalls: [
      { id: 'r1', name: 'read_file', arguments: { path: 'src/app.ts' } },
      { id: 'w1', name: 'write_file', arguments: { path: 'src/b.ts', content: 'export const b = 2;\n' } },
    ],
  });
  server.enqueue(callTool('present_plan', { plan: PLAN }, 'p1'));
  return generateHarness({
    harness,
    session: id,
    planMode: true,
    messages: [{ role: 'user', content: 'add b' }],
  });
}

describe('plan mode', () => {
  it('reads, refuses a write, waits on the plan; approved, the session switches policy and implements it', async () => {
    const harness = await planSession('s');
    const planned = await planTurn(harness, 's');
    expect(planned.outcome.status).toBe('awaiting_approval');
    const events = eventsOf(home, 's');
    expect(events.findIndex((e) => e.kind === 'plan_mode_changed')).toBeLessThan(
      events.findIndex((e) => e.kind === 'user_message'),
    );
    const results = events.filter((e) => e.kind === 'tool_result');
    expect(results.find((e) => e.toolCallId === 'r1')?.content).toContain('export const a = 1;');
    expect(results.find((e) => e.toolCallId === 'w1')).toMatchObject({ isError: true });
    expect(results.find((e) => e.toolCallId === 'w1')?.content).toMatch(
      /plan mode: write_file is not available/,
    );
    expect(read(path.join(project, 'src/b.ts'))).toBeUndefined();
    // The model was told (environment block) and offered present_plan.
    expect(body(0)).toContain(PLAN_MODE_LINE.slice(0, 40));
    expect(body(0)).toContain('"present_plan"');
    expect(pendingPlans(events).map((p) => p.plan)).toEqual([PLAN]);
    expect(foldSession(events)).toMatchObject({ planMode: true, policy: 'ask' });

    // keel approve's path refuses a plan; the plan's own decision records the policy chosen.
    await withWritableSession(home, 's', (log) => {
      expect(() => decideApproval(home, log, { decision: 'grant', scope: 'once' }, 'test')).toThrow(
        /is a plan: approve it with keel plan/,
      );
      const decided = decidePlan(log, { decision: 'approve', policy: 'auto-edit' });
      expect(decided.plan).toBe(PLAN);
      return Promise.resolve();
    });
    // Decided: no longer waiting in the session's status (nor in the index's awaiting-approval column).
    const waiting = await (await harness.sessions.get('s'))?.status();
    expect(waiting?.pendingApprovals).toEqual([]);
    expect(waiting?.state).not.toBe('awaiting_approval');
    server.enqueue(callTool('write_file', { path: 'src/b.ts', content: 'export const b = 2;\n' }, 'w2'));
    server.enqueue({ kind: 'reply', text: 'done' });
    const implemented = await generateHarness({ harness, session: 's', messages: [] });
    expect(implemented.outcome).toMatchObject({ status: 'completed', text: 'done' });
    expect(toolResultsSeen(server).join('\n')).toMatch(/approved your plan.*policy is now auto-edit/);
    expect(read(path.join(project, 'src/b.ts'))).toBe('export const b = 2;\n');
    const after = eventsOf(home, 's');
    expect(after.some((e) => e.kind === 'approval_request' && e.tool === 'write_file')).toBe(false);
    expect(foldSession(after)).toMatchObject({ planMode: false, policy: 'auto-edit' });
    expect(body(server.requests.length - 1)).not.toContain(PLAN_MODE_LINE.slice(0, 40));
  });

  it('sent back with comments, the model reads them and presents a revised plan; plan mode stays on', async () => {
    const harness = await planSession('s');
    await planTurn(harness, 's');
    await withWritableSession(home, 's', (log) => {
      expect(() => decidePlan(log, { decision: 'reject', comments: '  ' })).toThrow(/needs comments/);
      decidePlan(log, { decision: 'reject', comments: 'Put b in src/lib/b.ts instead.' });
      return Promise.resolve();
    });
    server.enqueue(callTool('present_plan', { plan: '# Plan v2\n\n1. Add `src/lib/b.ts`.' }, 'p2'));
    const revised = await generateHarness({ harness, session: 's', messages: [] });
    expect(revised.outcome.status).toBe('awaiting_approval');
    expect(toolResultsSeen(server).at(-1)).toMatch(
      /sent your plan back[\s\S]*Put b in src\/lib\/b.ts instead\./,
    );
    const events = eventsOf(home, 's');
    expect(events.find((e) => e.kind === 'plan_rejected')).toMatchObject({
      comments: 'Put b in src/lib/b.ts instead.',
    });
    expect(pendingPlans(events).map((p) => p.plan)).toEqual(['# Plan v2\n\n1. Add `src/lib/b.ts`.']);
    expect(foldSession(events)).toMatchObject({ planMode: true, policy: 'ask' });
  });

  it('resumes while a plan waits (a new harness: no request, still waiting); plan mode cannot be left meanwhile', async () => {
    const harness = await planSession('s');
    await planTurn(harness, 's');
    const requests = server.requests.length;
    const restarted = harnessFor(home, server, { project }, { policy: undefined });
    const resumed = await generateHarness({ harness: restarted, session: 's', messages: [] });
    expect(resumed.outcome.status).toBe('awaiting_approval');
    expect(server.requests.length).toBe(requests);
    await expect(setPlanMode(home, 's', false)).rejects.toThrow(/a plan is waiting/);
    expect(pendingPlans(eventsOf(home, 's'))).toHaveLength(1);
  });

  it('outside plan mode present_plan is a tool error, and a read-only session cannot plan', async () => {
    const harness = await planSession('s');
    await setPlanMode(home, 's', true);
    await setPlanMode(home, 's', false);
    server.enqueue(callTool('present_plan', { plan: 'x' }, 'p1'));
    server.enqueue({ kind: 'reply', text: 'ok' });
    await generateHarness({ harness, session: 's', messages: [{ role: 'user', content: 'hi' }] });
    expect(toolResultsSeen(server).at(-1)).toMatch(/plan mode is off/);
    await harness.sessions.getOrCreate({ id: 'ro', create: { policy: 'read-only' } });
    await expect(setPlanMode(home, 'ro', true)).rejects.toThrow(/created read-only/);
  });
});
