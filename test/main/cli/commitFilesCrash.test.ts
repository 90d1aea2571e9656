import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId, rejected } from '../../support/sessionFixture.js';

// Issue 20, item 6: a process killed while a commit's files are still being written (the first in the folder,
// the rest not). The commit intent holds the plan before the first write; the next open finishes the commit,
// so the folder is exactly the committed state, never half, and the commit is recorded once.

const cli = useCliFixture('keel-commitfiles-');

const crash = { KEEL_CRASH_AT: 'during_commit_files' };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const commitsOf = (id: string) => eventsOf(cli.home, id).filter((e) => e.kind === 'persistent_commit');
const run = (prompt: string, extra: string[] = []) =>
  newSessionArgs(cli, { policy: 'full-auto', prompt, extra });
const read = (file: string) =>
  fs.existsSync(path.join(cli.project, file))
    ? fs.readFileSync(path.join(cli.project, file), 'utf8')
    : undefined;
/** Every entry of a folder, hidden ones included (a killed write's temp file would show here). */
const entries = (folder: string) => fs.readdirSync(folder).sort();

describe('a kill while a commit is writing its files', () => {
  it('auto (checkout): resume finishes the commit, every file as committed, one persistent_commit', async () => {
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt'])
      fs.writeFileSync(path.join(cli.project, name), 'old\n');
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'for f in a b c; do echo new > $f.txt; done; rm d.txt; echo made > e.txt' },
          },
        ],
      },
      { kind: 'reply', text: 'done' },
    );
    await cli.killedAt(run('rewrite'), crash);
    const id = onlySessionId(cli.home);
    // Half: a file written, the deletion (done after every write) not yet, nothing recorded.
    expect(
      ['a.txt', 'b.txt', 'c.txt', 'e.txt'].some((f) => read(f) === 'new\n' || read(f) === 'made\n'),
    ).toBe(true);
    expect(read('d.txt')).toBe('old\n');
    expect(commitsOf(id)).toEqual([]);

    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(
      /keel: project: a commit interrupted \(a crash, a full disk\) before all its files were written was finished/,
    );
    // Exactly after, file by file, and nothing else in the folder.
    expect(read('a.txt')).toBe('new\n');
    expect(read('b.txt')).toBe('new\n');
    expect(read('c.txt')).toBe('new\n');
    expect(read('d.txt')).toBeUndefined();
    expect(read('e.txt')).toBe('made\n');
    expect(entries(cli.project)).toEqual(['a.txt', 'b.txt', 'c.txt', 'e.txt']);
    const commits = commitsOf(id);
    expect(commits).toHaveLength(1);
    const files = commits[0]?.kind === 'persistent_commit' ? commits[0].files : [];
    expect(files.map((f) => [f.path, f.preHash, f.postHash]).sort()).toEqual([
      ['a.txt', sha256('old\n'), sha256('new\n')],
      ['b.txt', sha256('old\n'), sha256('new\n')],
      ['c.txt', sha256('old\n'), sha256('new\n')],
      ['d.txt', sha256('old\n'), null],
      ['e.txt', null, sha256('made\n')],
    ]);

    // Recorded once: a new turn commits nothing again, and a second resume finds nothing to finish.
    cli.server.enqueue({ kind: 'reply', text: 'nothing to do' });
    expect((await keel(cli.home, ['run', '--session', id, 'anything else?'])).code).toBe(0);
    expect(commitsOf(id)).toHaveLength(1);
    expect(entries(cli.project)).toEqual(['a.txt', 'b.txt', 'c.txt', 'e.txt']);
    expect((await keel(cli.home, ['resume', id])).stderr).not.toMatch(/interrupted/);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('--commit direct: the granted files written at the next turn start are finished by resume, one persistent_commit', async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command:
                "mkdir -p .vscode && echo '{}' > .vscode/settings.json && echo '[]' > .vscode/tasks.json",
            },
          },
        ],
      },
      { kind: 'reply', text: 'configured' },
    );
    const first = await keel(cli.home, run('configure', ['--commit', 'direct']));
    expect(first.stderr).toMatch(/approval needed \(request \d+\): commit_protected/);
    const id = onlySessionId(cli.home);
    expect((await keel(cli.home, ['approve', id, '--scope', 'once'])).code).toBe(0);
    const vscode = path.join(cli.project, '.vscode');
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    await cli.killedAt(['run', '--session', id, 'next'], crash);
    // Half: the first granted file is in the folder, the second is not.
    const written = ['settings.json', 'tasks.json'].filter((f) => fs.existsSync(path.join(vscode, f)));
    expect(written).toHaveLength(1);
    expect(commitsOf(id)).toEqual([]);

    cli.server.enqueue({ kind: 'reply', text: 'next' });
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.stderr).toMatch(
      /keel: project: granted files interrupted \(a crash, a full disk\) while they were written were finished/,
    );
    expect(read('.vscode/settings.json')).toBe('{}\n');
    expect(read('.vscode/tasks.json')).toBe('[]\n');
    expect(entries(vscode)).toEqual(['settings.json', 'tasks.json']);
    const commits = commitsOf(id);
    expect(commits).toHaveLength(1);
    const files = commits[0]?.kind === 'persistent_commit' ? commits[0].files : [];
    expect(files.map((f) => [f.path, f.preHash, f.postHash]).sort()).toEqual([
      ['.vscode/settings.json', null, sha256('{}\n')],
      ['.vscode/tasks.json', null, sha256('[]\n')],
    ]);
    cli.server.enqueue({ kind: 'reply', text: 'again' });
    expect((await keel(cli.home, ['run', '--session', id, 'again'])).code).toBe(0);
    expect(commitsOf(id)).toHaveLength(1);
    expect(read('.vscode/tasks.json')).toBe('[]\n');
    expect(rejected(cli.server)).toEqual([]);
  });
});
