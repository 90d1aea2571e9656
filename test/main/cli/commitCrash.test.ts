import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId, rejected } from '../../support/sessionFixture.js';

// Issue 20, item 6: a process killed after a commit's files reached the project folder and before its
// persistent_commit was appended left the folder changed with no event. The commit intent
// (main/core/persistent/commitIntent.ts) holds the events first; the next open records them, once.

const cli = useCliFixture('keel-commitcrash-', {
  prepare: ({ project }) => fs.writeFileSync(path.join(project, 'notes.md'), 'old\n'),
});

const run = (prompt: string, extra: string[] = []) =>
  newSessionArgs(cli, { policy: 'full-auto', prompt, extra });

const appendLine = (file: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'run_command', arguments: { command: `echo ran >> ${file}` } }],
});

const commitsOf = (id: string) => eventsOf(cli.home, id).filter((e) => e.kind === 'persistent_commit');
const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const crash = { KEEL_CRASH_AT: 'after_commit_before_event' };

describe('a crash between a commit writing the folder and its persistent_commit', () => {
  // Killed before the append, and inside the append's transaction (the issue's own case).
  it.each([
    ['after_commit_before_event', crash],
    [
      'during_append of persistent_commit',
      { KEEL_CRASH_AT: 'during_append', KEEL_CRASH_KIND: 'persistent_commit' },
    ],
  ])(
    'auto, killed %s: the folder holds the change once, resume records exactly one persistent_commit with its hashes',
    async (_point, env) => {
      cli.server.enqueue(appendLine('ledger.txt'), { kind: 'reply', text: 'done' });
      await cli.killedAt(run('go'), env);
      const id = onlySessionId(cli.home);
      // The files landed, the event did not (what the issue saw, and what the intent is for).
      expect(fs.readFileSync(path.join(cli.project, 'ledger.txt'), 'utf8')).toBe('ran\n');
      expect(commitsOf(id)).toEqual([]);

      const resumed = await keel(cli.home, ['resume', id]);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toMatch(
        /keel: project: a commit interrupted by a crash was recorded \(ledger\.txt\)/,
      );
      const commits = commitsOf(id);
      expect(commits).toHaveLength(1);
      expect(commits[0]).toMatchObject({
        dir: 'project',
        files: [
          { path: 'ledger.txt', preHash: null, postHash: sha256(path.join(cli.project, 'ledger.txt')) },
        ],
      });
      expect(fs.readFileSync(path.join(cli.project, 'ledger.txt'), 'utf8')).toBe('ran\n');

      // A new turn resets the checkout and commits nothing again: still one line, still one commit.
      cli.server.enqueue({ kind: 'reply', text: 'nothing to do' });
      expect((await keel(cli.home, ['run', '--session', id, 'anything else?'])).code).toBe(0);
      expect(fs.readFileSync(path.join(cli.project, 'ledger.txt'), 'utf8')).toBe('ran\n');
      expect(commitsOf(id)).toHaveLength(1);
      expect((await keel(cli.home, ['resume', id])).stderr).not.toMatch(/interrupted by a crash/);
      expect(rejected(cli.server)).toEqual([]);
    },
  );

  it('manual: keel commit killed after writing is recorded once by the next keel commit, nothing written twice', async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'new\n' } }],
      },
      { kind: 'reply', text: 'drafted' },
    );
    expect((await keel(cli.home, run('draft', ['--commit', 'manual']))).code).toBe(0);
    const id = onlySessionId(cli.home);
    expect(fs.readFileSync(path.join(cli.project, 'notes.md'), 'utf8')).toBe('old\n');
    await cli.killedAt(['commit', id], crash);
    expect(fs.readFileSync(path.join(cli.project, 'notes.md'), 'utf8')).toBe('new\n');
    expect(commitsOf(id)).toEqual([]);

    const again = await keel(cli.home, ['commit', id]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/nothing to commit in project/);
    const commits = commitsOf(id);
    expect(commits).toHaveLength(1);
    expect(commits[0]).toMatchObject({
      dir: 'project',
      files: [
        {
          path: 'notes.md',
          preHash: createHash('sha256').update('old\n').digest('hex'),
          postHash: createHash('sha256').update('new\n').digest('hex'),
        },
      ],
    });
    expect(fs.readFileSync(path.join(cli.project, 'notes.md'), 'utf8')).toBe('new\n');
  });

  it("direct: granted protected files written at the next turn's start, killed before the event, are recorded once", async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: "mkdir -p .vscode && echo '{}' > .vscode/settings.json" },
          },
        ],
      },
      { kind: 'reply', text: 'made it' },
    );
    const first = await keel(cli.home, run('configure', ['--commit', 'direct']));
    expect(first.stderr).toMatch(/approval needed \(request \d+\): commit_protected/);
    const id = onlySessionId(cli.home);
    const settings = path.join(cli.project, '.vscode', 'settings.json');
    expect(fs.existsSync(settings)).toBe(false);
    expect((await keel(cli.home, ['approve', id, '--scope', 'once'])).code).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    await cli.killedAt(['run', '--session', id, 'next'], crash);
    expect(fs.readFileSync(settings, 'utf8')).toBe('{}\n');
    expect(commitsOf(id)).toEqual([]);

    cli.server.enqueue({ kind: 'reply', text: 'next' });
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.stderr).toMatch(
      /keel: project: a commit interrupted by a crash was recorded \(\.vscode\/settings\.json\)/,
    );
    expect(commitsOf(id)).toHaveLength(1);
    expect(commitsOf(id)[0]).toMatchObject({
      dir: 'project',
      files: [{ path: '.vscode/settings.json', postHash: sha256(settings) }],
    });
    cli.server.enqueue({ kind: 'reply', text: 'again' });
    expect((await keel(cli.home, ['run', '--session', id, 'again'])).code).toBe(0);
    expect(commitsOf(id)).toHaveLength(1);
    expect(fs.readFileSync(settings, 'utf8')).toBe('{}\n');
  });

  it('a file changed in the folder after the crash is not claimed by the recorded commit', async () => {
    cli.server.enqueue(appendLine('ledger.txt'), { kind: 'reply', text: 'done' });
    await cli.killedAt(run('go'), crash);
    const id = onlySessionId(cli.home);
    fs.writeFileSync(path.join(cli.project, 'ledger.txt'), 'the user rewrote it\n');
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/changed in the folder since, not recorded as this commit's: ledger\.txt/);
    expect(commitsOf(id)).toEqual([]);
    expect(fs.readFileSync(path.join(cli.project, 'ledger.txt'), 'utf8')).toBe('the user rewrote it\n');
  });
});
