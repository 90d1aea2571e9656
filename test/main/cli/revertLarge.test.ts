import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/*
 * Reverting in a 10k-file git project, binary files included (a 3 MiB random file a command overwrote, an
 * executable's mode, a file a command deleted), with a checkout and with --commit direct.
 */

const BIG = randomBytes(3 * 1024 * 1024);

const cli = useCliFixture('keel-revert-large-', {
  prepareTimeoutMs: 120_000,
  prepare: ({ project }) => {
    for (let folder = 0; folder < 100; folder++) {
      fs.mkdirSync(path.join(project, `d${folder}`));
      for (let file = 0; file < 100; file++)
        fs.writeFileSync(
          path.join(project, `d${folder}`, `f${file}.txt`),
          `folder ${folder}\nfile ${file}\n`,
        );
    }
    fs.writeFileSync(path.join(project, 'big.bin'), BIG);
    fs.writeFileSync(path.join(project, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    // gc.auto=0: a commit of 10,000 loose objects otherwise starts a detached `gc --auto`, still repacking the
    // project's .git when the test removes it (ENOTEMPTY), whatever Keel did.
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', '-c', 'gc.auto=0', ...args], {
        cwd: project,
      });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  },
});

const gitStatus = () =>
  execFileSync('git', ['status', '--porcelain'], { cwd: cli.project, encoding: 'utf8' }).trim();

describe('revert in a 10k-file project', () => {
  it.each([
    ['a checkout', []],
    ['--commit direct', ['--commit', 'direct']],
  ] as const)(
    'with %s: ten edited files, an overwritten 3 MiB binary, a mode and a deletion come back exactly',
    async (_name, extra) => {
      const edits = Array.from({ length: 10 }, (_, i) => `d${i * 7}/f${i}.txt`);
      cli.server.enqueue(
        {
          kind: 'reply',
          toolCalls: [
            {
              name: 'run_command',
              arguments: {
                command:
                  `sed -i 's/^file/FILE/' ${edits.join(' ')} && head -c 3000000 /dev/urandom > big.bin && ` +
                  'chmod 644 run.sh && rm d99/f99.txt',
              },
            },
          ],
        },
        { kind: 'reply', text: 'done' },
      );
      const ran = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'edit', extra }));
      expect(ran.code, ran.stderr).toBe(0);
      const id = onlySessionId(cli.home);
      const events = eventsOf(cli.home, id);
      // The command's result and the turn's events first: a command that failed, or a commit that did not land,
      // says so here rather than as an empty git status.
      const turn = JSON.stringify(
        events.filter((e) => e.kind !== 'session_created'),
        null,
        1,
      ).slice(0, 8000);
      const result = events.find((e) => e.kind === 'tool_result');
      expect(result?.kind === 'tool_result' && result.content, turn).toMatch(/\[exit code 0,/);
      expect(gitStatus().split('\n'), turn).toHaveLength(13);
      const [commit] = events.filter((e) => e.kind === 'persistent_commit');
      expect(commit?.kind === 'persistent_commit' && commit.files).toHaveLength(13);

      // Its speed is measured by the bench (`history`, target < 300 ms), not bounded here.
      const reverted = await keel(cli.home, ['revert', id, '--turn', '1']);
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(reverted.stderr).toMatch(/reverted turn 1: 13 files/);
      // Byte for byte, modes included: the repository sees no change at all.
      expect(gitStatus()).toBe('');
      expect(fs.readFileSync(path.join(cli.project, 'big.bin')).equals(BIG)).toBe(true);
      expect(fs.statSync(path.join(cli.project, 'run.sh')).mode & 0o111).not.toBe(0);
    },
    180_000,
  );
});
