import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { type AcpSession, startAcp, updatesOf, writeAcpSettings } from '../../support/acpClient.js';
import { eventsOf as eventsOfSession } from '../../support/sessionFixture.js';
import { useCliFixture } from '../../support/cliFixture.js';

// Issue #30: Keel's plan mode as an ACP session mode, driven by the official SDK's client against `keel acp`.

const cli = useCliFixture('keel-acp-plan-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'a.txt'), 'alpha\n'),
});

let running: AcpSession[] = [];
afterEach(async () => {
  for (const acp of running) await acp.close();
  running = [];
});

const eventsOf = (id: string): SessionEvent[] => eventsOfSession(cli.home, id);
const modeUpdates = (acp: AcpSession, id: string) =>
  updatesOf(acp, id, 'current_mode_update').map((u) => ('currentModeId' in u ? u.currentModeId : undefined));
const presentPlan = (plan: string) => ({
  kind: 'reply' as const,
  toolCalls: [{ name: 'present_plan', arguments: { plan } }],
});

describe('keel acp: plan mode as a session mode', () => {
  it('set_mode plan records plan mode; the plan is asked with policies to go on in; load reports the mode', async () => {
    writeAcpSettings(cli.home, cli.server, 'ask');
    const acp = await startAcp(cli.home);
    running.push(acp);
    const created = await acp.connection.agent.request('session/new', { cwd: cli.project, mcpServers: [] });
    const { sessionId } = created;
    expect(created.modes?.currentModeId).toBe('ask');
    expect(created.modes?.availableModes.map((mode) => mode.id)).toContain('plan');

    await acp.connection.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    expect(eventsOf(sessionId).filter((e) => e.kind === 'plan_mode_changed')).toEqual([
      expect.objectContaining({ active: true }),
    ]);

    // The model plans; the editor approves with auto-edit; the model implements without asking.
    cli.server.enqueue(
      presentPlan('1. Change a.txt to gamma'),
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'gamma\n' } }],
      },
      { kind: 'reply', text: 'Done.' },
    );
    acp.answer = (request) =>
      Promise.resolve({
        outcome: {
          outcome: 'selected',
          optionId: request.options.find((o) => o.name.includes('edit without asking'))?.optionId ?? 'none',
        },
      });
    const first = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'plan the change' }],
    });
    expect(first.stopReason).toBe('end_turn');
    expect(acp.permissions).toHaveLength(1);
    const [asked] = acp.permissions;
    expect(asked?.toolCall).toMatchObject({
      kind: 'switch_mode',
      content: [{ type: 'content', content: { type: 'text', text: '1. Change a.txt to gamma' } }],
    });
    expect(asked?.options.map((o) => o.kind)).toEqual([
      'allow_once',
      'allow_always',
      'allow_always',
      'reject_once',
    ]);
    expect(eventsOf(sessionId).find((e) => e.kind === 'plan_approved')).toMatchObject({
      policy: 'auto-edit',
    });
    expect(fs.readFileSync(path.join(cli.project, 'a.txt'), 'utf8')).toBe('gamma\n');
    expect(modeUpdates(acp, sessionId)).toEqual(['plan', 'auto-edit']);

    // Plan again, and keep planning: plan mode stays, the model reads why.
    await acp.connection.agent.request('session/set_mode', { sessionId, modeId: 'plan' });
    cli.server.enqueue(presentPlan('2. Delete a.txt'), { kind: 'reply', text: 'What should change?' });
    acp.answer = () => Promise.resolve({ outcome: { outcome: 'selected', optionId: 'plan_keep_planning' } });
    await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'another plan' }],
    });
    const rejected = eventsOf(sessionId).find((e) => e.kind === 'plan_rejected');
    expect(rejected?.kind === 'plan_rejected' && rejected.comments).toContain('keep planning');
    expect(modeUpdates(acp, sessionId)).toEqual(['plan', 'auto-edit', 'plan', 'plan']);
    expect(fs.existsSync(path.join(cli.project, 'a.txt'))).toBe(true);

    // A fresh connection sees the mode the log says; a policy mode turns plan mode off.
    const again = await startAcp(cli.home);
    running.push(again);
    const resumed = await again.connection.agent.request('session/resume', {
      sessionId,
      cwd: cli.project,
      mcpServers: [],
    });
    expect(resumed.modes?.currentModeId).toBe('plan');
    await again.connection.agent.request('session/set_mode', { sessionId, modeId: 'full-auto' });
    const tail = eventsOf(sessionId).slice(-2);
    expect(tail).toEqual([
      expect.objectContaining({ kind: 'plan_mode_changed', active: false }),
      expect.objectContaining({ kind: 'policy_changed', policy: 'full-auto' }),
    ]);
    await expect(
      again.connection.agent.request('session/set_mode', { sessionId, modeId: 'dream' }),
    ).rejects.toThrow(/unknown mode/);
  });
});
