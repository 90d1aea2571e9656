import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompactionRecord } from '../../../main/core/compaction/inspect.js';
import type { EventOf } from '../../../main/common/events.js';
import { runKeel } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { RecordedRequest, ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs } from '../../support/sessionFixture.js';
import { conversationOf, isSummaryRequest, replyWithUsage, summaryFor } from '../core/compaction/scripted.js';

const OBJECTIVE = 'OBJECTIVE: tidy the billing module. CONSTRAINT: do not touch migrations.';

const cli = useCliFixture('keel-compact-', {
  server: {
    respond: (request: RecordedRequest): ScriptStep => {
      if (isSummaryRequest(request)) return { kind: 'reply', text: summaryFor(request) };
      const messages = conversationOf(request);
      if (messages[messages.length - 1]?.role === 'user') {
        return replyWithUsage(request, {
          toolCalls: [{ name: 'read_file', arguments: { path: 'src/billing.txt' } }],
        });
      }
      return replyWithUsage(request, {
        text: 'Every line charges an account; nothing touches the schema.',
      });
    },
  },
  prepare: ({ home, project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    const lines = Array.from({ length: 30 }, (_, n) => `billing line ${n + 1}: charge(account, amount)`);
    fs.writeFileSync(path.join(project, 'src', 'billing.txt'), `${lines.join('\n')}\n`);
    // keel compact reads keepRecent from settings.json: keep only the newest few hundred tokens.
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'settings.json'),
      JSON.stringify({ compaction: { threshold: 0.75, keepRecent: 0.05 } }),
    );
  },
});

const newSession = () => newSessionArgs(cli, { policy: 'read-only', prompt: OBJECTIVE, contextWindow: 8000 });

describe('keel compact and keel compactions', () => {
  it('compacts on demand, lists what was replaced, re-runs a compaction, and rebuilds the payload without it', async () => {
    const first = await keel(cli.home, newSession());
    expect(first.code, first.stderr).toBe(0);
    const id = fs.readdirSync(path.join(cli.home, 'sessions'))[0] as string;
    for (let turn = 2; turn <= 5; turn++) {
      const run = await keel(cli.home, ['run', '--session', id, `Turn ${turn}: read src/billing.txt again.`]);
      expect(run.code, run.stderr).toBe(0);
    }
    expect(eventsOf(cli.home, id).some((event) => event.kind === 'compaction')).toBe(false);

    const compacted = await keel(cli.home, ['compact', id]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const made = eventsOf(cli.home, id).filter((e): e is EventOf<'compaction'> => e.kind === 'compaction');
    expect(made).toHaveLength(1);
    const seq = made[0]?.seq as number;
    expect(compacted.stdout).toMatch(
      new RegExp(
        `^compaction #${seq} replaces events #2–#${made[0]?.through}: \\d+ → \\d+ tokens, 1 summary request\\n$`,
      ),
    );
    expect(made[0]?.summary).toContain('CONSTRAINT: do not touch migrations.');
    expect(made[0]?.pinned).toBe(OBJECTIVE);

    const listed = runKeel(cli.home, ['compactions', id, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const records = (JSON.parse(listed.stdout) as { compactions: CompactionRecord[] }).compactions;
    expect(records).toHaveLength(1);
    const record = records[0] as CompactionRecord;
    expect(record).toMatchObject({
      seq,
      fromSeq: 2,
      through: made[0]?.through,
      status: 'in_effect',
      pinned: OBJECTIVE,
    });
    expect(record.replaced.events.map((e) => e.seq)).toEqual(
      eventsOf(cli.home, id)
        .filter((e) => e.seq >= 2 && e.seq <= record.through)
        .map((e) => e.seq),
    );
    const now = JSON.parse(runKeel(cli.home, ['payload', id, '--json']).stdout) as { messages: unknown[] };
    expect(record.payloadWithout.messages.length).toBeGreaterThan(now.messages.length);
    expect(record.payloadWithout).toEqual(
      JSON.parse(runKeel(cli.home, ['payload', id, '--json', '--without-compaction', String(seq)]).stdout),
    );

    const rerun = await keel(cli.home, ['compact', id, '--rerun', String(seq)]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(new RegExp(`re-runs #${seq}; both are kept`));
    const after = eventsOf(cli.home, id).filter((e): e is EventOf<'compaction'> => e.kind === 'compaction');
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ through: after[0]?.through, fromSeq: 2, supersedes: seq });

    const text = runKeel(cli.home, ['compactions', id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`#${seq} compaction  superseded by #${after[1]?.seq}`);
    expect(text.stdout).toContain(`#${after[1]?.seq} compaction  in effect`);
    expect(text.stdout).toContain(`  re-run of #${seq}`);
    expect(text.stdout).toContain(`  pinned: ${OBJECTIVE}`);
    expect(text.stdout).toContain('    ## Constraints');
    expect(runKeel(cli.home, ['payload', id]).stdout).toContain(after[1]?.summary.split('\n')[0] ?? '');

    const trace = JSON.parse(runKeel(cli.home, ['trace', id, '--json']).stdout) as {
      entries: { stage: string; detail?: { trigger?: string; status?: string } }[];
    };
    const attempts = trace.entries
      .filter((entry) => entry.stage === 'compaction')
      .map((entry) => entry.detail);
    expect(attempts).toEqual([
      expect.objectContaining({ trigger: 'manual', status: 'compacted' }),
      expect.objectContaining({ trigger: 'rerun', status: 'compacted' }),
    ]);
  }, 120_000);

  it('explains what is wrong in one line: a seq that is not a compaction, a session without any', async () => {
    const created = await keel(cli.home, newSession());
    expect(created.code, created.stderr).toBe(0);
    const id = fs.readdirSync(path.join(cli.home, 'sessions'))[0] as string;
    const wrong = runKeel(cli.home, ['compact', id, '--rerun', '2']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(
      `keel: event 2 of session ${id} is not a compaction; see keel compactions ${id}\n`,
    );
    const none = runKeel(cli.home, ['compactions', id]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe(`session ${id} has no compactions (keel compact ${id} makes one)\n`);
    const missing = runKeel(cli.home, ['compactions', 'no-such-session']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^keel: no session no-such-session/);
  }, 60_000);
});
