import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/*
 * Issue #30, plan mode in the CLI: `keel run --plan` stops when the plan is presented, prints it on stdout and
 * exits 3 (an approval wait); `keel plan` shows it, sends it back with comments, then approves it in a policy
 * and `--resume` implements it.
 */

const cli = useCliFixture('keel-plan-');

describe('keel run --plan and keel plan', () => {
  it('prints the plan and waits; sent back, then approved with --policy auto-edit, the turn implements it', async () => {
    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'p1', name: 'present_plan', arguments: { plan: '# Plan\n\n1. Create notes.txt' } }],
    });
    const planned = await keel(
      cli.home,
      newSessionArgs(cli, { policy: 'ask', prompt: 'write notes', extra: ['--plan'] }),
    );
    expect(planned.code, planned.stderr).toBe(3);
    expect(planned.stdout).toContain('# Plan\n\n1. Create notes.txt');
    const id = onlySessionId(cli.home);
    expect(planned.stderr).toContain(`keel plan ${id} --approve`);

    const shown = await keel(cli.home, ['plan', id]);
    expect(shown.code).toBe(3);
    expect(shown.stdout).toContain('1. Create notes.txt');

    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'p2', name: 'present_plan', arguments: { plan: '# Plan v2\n\n1. Create NOTES.md' } }],
    });
    const back = await keel(cli.home, ['plan', id, '--reject', 'Use NOTES.md', '--resume']);
    expect(back.code, back.stderr).toBe(3);
    expect(back.stdout).toContain('# Plan v2');
    expect(JSON.stringify(cli.server.requests.at(-1)?.body)).toContain('Use NOTES.md');

    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'NOTES.md', content: 'n\n' } }],
    });
    cli.server.enqueue({ kind: 'reply', text: 'written' });
    const done = await keel(cli.home, ['plan', id, '--approve', '--policy', 'auto-edit', '--resume']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain('continues in policy auto-edit');
    expect(fs.readFileSync(path.join(cli.project, 'NOTES.md'), 'utf8')).toBe('n\n');
    const events = eventsOf(cli.home, id);
    expect(events.filter((e) => e.kind === 'plan_rejected')).toHaveLength(1);
    expect(events.find((e) => e.kind === 'plan_approved')).toMatchObject({ policy: 'auto-edit' });

    const none = await keel(cli.home, ['plan', id, '--approve']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('no plan is waiting');
  });
});
