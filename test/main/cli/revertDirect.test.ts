import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

const LINES = ['one', 'two', 'three', 'four', 'five', 'six'];
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff]);

const cli = useCliFixture('keel-revert-direct-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'a.txt'), `${LINES.join('\n')}\n`);
    fs.writeFileSync(path.join(project, 'src', 'image.bin'), BINARY);
    fs.writeFileSync(path.join(project, 'gone.txt'), 'deleted by the turn\n');
  },
});

const read = (file: string) => fs.readFileSync(path.join(cli.project, file), 'utf8');
const exists = (file: string) => fs.existsSync(path.join(cli.project, file));
const step = (name: string, args: Record<string, string>): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name, arguments: args }],
});
const commits = (id: string) =>
  eventsOf(cli.home, id).filter((e): e is EventOf<'persistent_commit'> => e.kind === 'persistent_commit');

describe('keel revert of a --commit direct session', () => {
  it.each([
    ['a git repository', true],
    ['a plain folder', false],
  ])(
    "records what a turn's commands changed in %s and reverts it; the user's edit between turns is kept",
    async (_name, withGit) => {
      if (withGit) {
        const git = (...args: string[]) =>
          execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
            cwd: cli.project,
            env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
          });
        git('init', '-q', '-b', 'main');
        git('add', '-A');
        git('commit', '-qm', 'initial');
      }
      cli.server.enqueue(
        step('run_command', {
          command:
            "sed -i 's/^two$/TWO/' src/a.txt && printf 'GIF\\000\\003' > src/image.bin && rm gone.txt && " +
            "printf 'new\\n' > src/made.txt",
        }),
        { kind: 'reply', text: 'done' },
      );
      const result = await keel(
        cli.home,
        newSessionArgs(
          { project: cli.project, server: cli.server },
          { policy: 'full-auto', prompt: 'edit', extra: ['--commit', 'direct'] },
        ),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(read('src/a.txt')).toContain('\nTWO\n');
      const id = onlySessionId(cli.home);
      const [commit] = commits(id);
      expect(commit?.dir).toBe('project');
      expect(commit?.files.map((f) => [f.path, f.preMode, f.postMode])).toEqual([
        ['gone.txt', '100644', undefined],
        ['src/a.txt', '100644', '100644'],
        ['src/image.bin', '100644', '100644'],
        ['src/made.txt', undefined, '100644'],
      ]);
      expect(
        fs.readFileSync(path.join(cli.home, 'sessions', id, 'artifacts', commit?.diffArtifact ?? ''), 'utf8'),
      ).toMatch(/\+TWO/);

      // A second turn that changes nothing records nothing; the user edits the file between turns.
      fs.writeFileSync(path.join(cli.project, 'src', 'a.txt'), read('src/a.txt').replace('six', 'SIX by me'));
      cli.server.enqueue({ kind: 'reply', text: 'nothing to do' });
      expect((await keel(cli.home, ['run', '--session', id, 'look'])).code).toBe(0);
      expect(commits(id)).toHaveLength(1);

      const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(reverted.stderr).toMatch(/reverted turn 1: 4 files/);
      expect(read('src/a.txt')).toBe(`${LINES.join('\n').replace('six', 'SIX by me')}\n`);
      expect(fs.readFileSync(path.join(cli.project, 'src', 'image.bin'))).toEqual(BINARY);
      expect(read('gone.txt')).toBe('deleted by the turn\n');
      expect(exists('src/made.txt')).toBe(false);
      // The shadow repository lives in the session's folder, never in the project's .git.
      expect(exists('.git/keel')).toBe(false);
      if (withGit)
        expect(
          execFileSync('git', ['status', '--porcelain'], { cwd: cli.project, encoding: 'utf8' }).trim(),
        ).toBe('M src/a.txt');

      // The next turn's start does not record the revert (or the user's edit) as a change of that turn.
      cli.server.enqueue({ kind: 'reply', text: 'ok' });
      expect((await keel(cli.home, ['run', '--session', id, 'again'])).code).toBe(0);
      expect(commits(id)).toHaveLength(1);
    },
  );
});
