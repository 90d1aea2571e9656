import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionTraceSummary } from '../../../main/core/trace/index.js';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import type { ProviderServer, ScriptStep } from '../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  startSessionFixture,
} from '../../support/sessionFixture.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
  ({ dir, home, project, server } = await startSessionFixture('keel-grants-'));
}, 180_000);

afterAll(async () => {
  await closeSessionFixture({ dir, server });
});

const write = (file: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }],
});

// The session works on a checkout (the default), its model's root: the model writes notes/<file>, which
// reaches the folder when the turn stops; grants match those project-relative paths.
const NOTES = 'notes';
const exists = (file: string) => fs.existsSync(path.join(project, file));

describe('keel grants / keel revoke', () => {
  it('lists a path grant, revokes it, and the next edit under that path asks again', async () => {
    server.enqueue(write(`${NOTES}/a.md`));
    const first = await keel(
      home,
      newSessionArgs({ project, server }, { policy: 'ask', prompt: 'take notes' }),
    );
    expect(first.code, first.stderr).toBe(3);
    const id = fs.readdirSync(path.join(home, 'sessions'))[0] as string;

    // Granted for notes/**: the pending write runs, and so does the next one without asking.
    server.enqueue(write(`${NOTES}/b.md`), { kind: 'reply', text: 'noted' });
    const approved = await keel(home, ['approve', id, '--scope', `path:${NOTES}/**`, '--resume']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(exists('notes/a.md') && exists('notes/b.md')).toBe(true);
    expect(eventsOf(home, id).filter((e) => e.kind === 'approval_request')).toHaveLength(1);
    const grantSeq = eventsOf(home, id).find((e) => e.kind === 'approval_granted')?.seq as number;

    const listed = await keel(home, ['grants', id, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const { grants } = JSON.parse(listed.stdout) as {
      grants: { seq: number; tool: string; scope: string; grantedAt: string; allows: string }[];
    };
    expect(grants).toEqual([
      expect.objectContaining({ seq: grantSeq, tool: 'write_file', scope: `path:${NOTES}/**` }),
    ]);
    expect(grants[0]?.allows).toContain(`${NOTES}/**`);
    expect(Date.parse(grants[0]?.grantedAt ?? '')).not.toBeNaN();
    const table = await keel(home, ['grants', id]);
    expect(table.stdout).toMatch(
      new RegExp(`^${grantSeq}\\s+write_file\\s+path:notes/\\*\\*\\s+\\S+\\s+in effect`, 'm'),
    );

    const revoked = await keel(home, ['revoke', id, String(grantSeq), '--reason', 'too broad']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`revoked grant ${grantSeq} (write_file, path:${NOTES}/**)`);
    expect(eventsOf(home, id).at(-1)).toMatchObject({
      kind: 'approval_revoked',
      grantSeq,
      reason: 'too broad',
    });
    expect((await keel(home, ['grants', id])).stdout).toBe('no grants in effect (keel grants --all)\n');
    const all = JSON.parse((await keel(home, ['grants', id, '--all', '--json'])).stdout) as {
      grants: { revoked?: { reason?: string } }[];
    };
    expect(all.grants[0]?.revoked?.reason).toBe('too broad');

    // The revoked grant no longer pre-authorises: the next write under notes/ waits for approval.
    server.enqueue(write(`${NOTES}/c.md`));
    const next = await keel(home, ['run', '--session', id, 'one more note']);
    expect(next.code, next.stderr).toBe(3);
    expect(exists('notes/c.md')).toBe(false);
    expect(eventsOf(home, id).filter((e) => e.kind === 'approval_request')).toHaveLength(2);

    const again = await keel(home, ['revoke', id, String(grantSeq)]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`grant ${grantSeq} was already revoked`);
    const notAGrant = await keel(home, ['revoke', id, '1']);
    expect(notAGrant.code).toBe(2);
    expect(notAGrant.stderr).toContain('event 1 is not a grant');

    // The trace shows both approval waits: the first decided, the second still pending.
    const trace = await keel(home, ['trace', id, '--json']);
    expect(trace.code, trace.stderr).toBe(0);
    const summary = JSON.parse(trace.stdout) as SessionTraceSummary & { entries: unknown[] };
    const waits = summary.turns.flatMap((turn) =>
      turn.stages.filter((stage) => stage.kind === 'approval_wait'),
    );
    expect(waits).toEqual([
      expect.objectContaining({ tool: 'write_file', decision: 'granted' }),
      expect.objectContaining({ tool: 'write_file', pending: true }),
    ]);
    expect(summary.turns.map((turn) => turn.turn)).toEqual([1, 2]);
    expect(summary.turns[0]?.stages.map((stage) => stage.kind)).toEqual(
      expect.arrayContaining(['projection', 'request', 'time_to_first_token', 'stream', 'tool']),
    );
    expect(summary.entries.length).toBeGreaterThan(0);
    const text = await keel(home, ['trace', id]);
    expect(text.stdout).toMatch(/^turn 1 {2}"take notes"/m);
    expect(text.stdout).toMatch(/approval write_file \S+ \(request \d+, granted\)/);
    expect(text.stdout).toMatch(/tool write_file/);
  }, 120_000);

  it('explains an unknown session in one line', async () => {
    const missing = await keel(home, ['grants', '0000000000aaaaaaaaaaaaaaaa']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no session 0000000000aaaaaaaaaaaaaaaa/);
  });
});
