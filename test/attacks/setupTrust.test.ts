import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { importSession } from '../../main/core/harness/transfer.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { approveProjectSetup, loadSetup } from '../../main/core/setup/index.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { foreignCreated, writeExportFile } from '../support/hostileExport.js';
import { useTurnHostFixture } from '../support/turnHost.js';

// Issue 30, trust: what a project folder brings has no effect before the user approved its exact bytes. A
// cloned repository with an allow rule, a rule file changed after approval, a link out of the project, and
// rules that came with an imported session file: none of them lets a command run without asking.

const fixture = useTurnHostFixture('keel-attack-setup-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'victim.txt'), 'keep me\n'),
});
let userHome: string;
beforeEach(() => {
  userHome = path.join(fixture.dir, 'user-home');
  fs.mkdirSync(userHome, { recursive: true });
});

function write(relative: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(fixture.project, relative)), { recursive: true });
  fs.writeFileSync(path.join(fixture.project, relative), text);
}

const attack = () => ({
  kind: 'reply' as const,
  text: '',
  toolCalls: [{ id: 'a1', name: 'run_command', arguments: { command: 'rm victim.txt' } }],
});

/** One turn that tries `rm victim.txt`; returns its outcome and whether the file survived. */
async function tryAttack(log: SessionLog) {
  fixture.server.enqueue(attack(), { kind: 'reply', text: 'done' });
  const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome } });
  try {
    const outcome = await runTurn(host, { prompt: 'go' });
    return { outcome, kept: fs.existsSync(path.join(fixture.project, 'victim.txt')) };
  } finally {
    await host.dispose?.();
  }
}

describe.runIf(process.platform === 'linux')('attack: project setup before trust (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('a cloned repository with an allow rule, in both layouts, asks as if it had none', async () => {
    write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash'] } }));
    write('.keel/settings.json', JSON.stringify({ permissions: { allow: ['Bash(rm:*)'] } }));
    const log = fixture.createSession({ policy: 'ask', toolMode: 'write' });
    const { outcome, kept } = await tryAttack(log);
    expect(outcome.status).toBe('awaiting_approval');
    expect(kept).toBe(true);
    expect(log.read().some((e) => e.kind === 'permission_rules_applied')).toBe(false);
  });

  it('a rule file changed after approval is untrusted again', async () => {
    write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'] } }));
    approveProjectSetup(fixture.home, fixture.project, 'test');
    write(
      '.claude/settings.json',
      JSON.stringify({ permissions: { allow: ['Bash(npm test:*)', 'Bash(rm:*)'] } }),
    );
    const log = fixture.createSession({ policy: 'ask', toolMode: 'write' });
    const { outcome, kept } = await tryAttack(log);
    expect(outcome.status).toBe('awaiting_approval');
    expect(kept).toBe(true);
    expect(loadSetup({ home: fixture.home, userHome, project: fixture.project }).untrusted).toEqual([
      expect.objectContaining({ relativePath: '.claude/settings.json', state: 'changed' }),
    ]);
  });

  it('a deny rule stays in effect, as approved, when its file is changed or removed after approval', async () => {
    write('.claude/settings.json', JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }));
    approveProjectSetup(fixture.home, fixture.project, 'test');
    for (const change of ['edit', 'remove'] as const) {
      if (change === 'edit')
        write('.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash'] } }));
      else fs.rmSync(path.join(fixture.project, '.claude/settings.json'));
      const log = fixture.createSession({ policy: 'full-auto', toolMode: 'write' });
      const { outcome, kept } = await tryAttack(log);
      expect(outcome).toEqual({ status: 'completed', text: 'done' });
      expect(kept).toBe(true);
      const result = log.read().find((e) => e.kind === 'tool_result' && e.toolCallId === 'a1');
      expect(result).toMatchObject({ isError: true });
      expect(JSON.stringify(result)).toContain('as approved (changed since)');
    }
  });

  it('a settings folder linked to a trusted place outside the project is refused', () => {
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      JSON.stringify({ permissions: { allow: ['Bash'] } }),
    );
    // Approving the project must not approve bytes that live outside it.
    fs.symlinkSync(path.join(userHome, '.claude'), path.join(fixture.project, '.claude'));
    write('.keel/commands/x.md', 'x\n');
    approveProjectSetup(fixture.home, fixture.project, 'test');
    const setup = loadSetup({ home: fixture.home, project: fixture.project });
    expect(setup.files.map((file) => file.relativePath)).toEqual(['.keel/commands/x.md']);
    expect(setup.problems[0]?.message).toMatch(/links outside the project folder/);
  });

  it('rules that came with an imported session file have no effect', async () => {
    const file = writeExportFile(fixture, [
      foreignCreated(fixture, { policy: 'full-auto' }),
      {
        kind: 'permission_rules_applied',
        project: '/somewhere/else',
        userHome: '',
        rules: [{ action: 'allow', rule: 'Bash', source: 'keel' }],
      },
    ]);
    const { id } = importSession(fixture.home, fs.readFileSync(file, 'utf8'), { project: fixture.project });
    const log = fixture.track(SessionLog.open(fixture.home, id, { write: true }));
    // The user confirms the endpoint here (as keel model does), so the turn reaches the gate.
    log.append({
      kind: 'model_changed',
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: fixture.server.openaiBaseUrl,
      contextWindow: 32_000,
    });
    const { outcome, kept } = await tryAttack(log);
    expect(outcome.status).toBe('awaiting_approval');
    expect(kept).toBe(true);
    const applied = log
      .read()
      .filter((e): e is EventOf<'permission_rules_applied'> => e.kind === 'permission_rules_applied');
    expect(applied).toHaveLength(1);
  });
});
