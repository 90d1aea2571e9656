import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId, rejected } from '../../support/sessionFixture.js';
import { fillDisk, mountTmpfs, TMPFS_REFUSED, unmountTmpfs } from '../../support/tmpfs.js';

// Issue 20, item 4: a full disk. The message names the file and the session and says what to do; a session
// made while the disk is full is complete or absent; nothing recorded is lost; after space is freed,
// `keel resume` continues. The Keel home is a 2 MiB tmpfs, filled by the test.

/** What the scripted model answers once its queue is empty (the test fills the disk there). */
let whenQueueEmpty: (() => ScriptStep) | undefined;

const cli = useCliFixture('keel-diskfull-', {
  server: { respond: () => whenQueueEmpty?.() ?? { kind: 'reply', text: 'unscripted' } },
  prepare: ({ home }) => {
    whenQueueEmpty = undefined;
    fs.mkdirSync(home);
    mountTmpfs(home, '2m');
  },
  cleanup: ({ home }) => unmountTmpfs(home),
});

const newSession = (prompt: string) => newSessionArgs(cli, { policy: 'full-auto', prompt });
/** No stack frame, no Node error dump: one line a person can act on. */
const NO_STACK = /^\s+at |SqliteError|DiskFullError/m;

function expectWhole(events: readonly SessionEvent[]): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
}

describe.skipIf(TMPFS_REFUSED !== undefined)(
  `a full disk under the Keel home${TMPFS_REFUSED ? ` (skipped: ${TMPFS_REFUSED})` : ''}`,
  () => {
    it('filling mid-turn: the message names events.sqlite, the session and keel resume; after freeing space resume finishes the turn', async () => {
      cli.server.enqueue({ kind: 'reply', text: 'hello' });
      expect((await keel(cli.home, newSession('hi'))).code).toBe(0);
      const id = onlySessionId(cli.home);
      const before = eventsOf(cli.home, id);

      let filler: string | undefined;
      cli.server.enqueue({
        kind: 'reply',
        toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }],
      });
      // The model's answer after the tool ran arrives on a disk that is full: its append (too large for any
      // room the log's WAL may still have) fails.
      whenQueueEmpty = () => {
        whenQueueEmpty = undefined;
        filler = fillDisk(cli.home);
        return { kind: 'reply', text: [`written ${'w'.repeat(256 * 1024)}`] };
      };
      const failed = await keel(cli.home, ['run', '--session', id, 'write a.txt']);
      expect(failed.code).toBe(1);
      const events = path.join(cli.home, 'sessions', id, 'events.sqlite');
      expect(failed.stderr).toContain(
        `keel: session ${id}: ${events} could not be written: the disk is full (database or disk is full). ` +
          `Everything recorded before is intact; free space on that disk, then \`keel resume ${id}\` continues the turn`,
      );
      expect(failed.stderr).not.toMatch(NO_STACK);

      // Nothing recorded was lost: the earlier turn and this one up to the tool's result.
      expect(filler).toBeDefined();
      fs.rmSync(filler as string);
      const kept = eventsOf(cli.home, id);
      expect(kept.slice(0, before.length)).toEqual(before);
      expect(kept.slice(before.length).map((event) => event.kind)).toEqual([
        'user_message',
        'assistant_message',
        'tool_call_started',
        'tool_result',
      ]);

      cli.server.enqueue({ kind: 'reply', text: 'written after all' });
      const resumed = await keel(cli.home, ['resume', id]);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('written after all');
      const after = eventsOf(cli.home, id);
      expectWhole(after);
      expect(after.slice(0, kept.length)).toEqual(kept);
      expect(after.slice(kept.length).map((event) => event.kind)).toEqual([
        'assistant_message',
        'persistent_commit',
      ]);
      expect(fs.readFileSync(path.join(cli.project, 'a.txt'), 'utf8')).toBe('a\n');
      expect(rejected(cli.server)).toEqual([]);
      expect((await keel(cli.home, ['sessions'])).stdout).toContain(id);
    });

    it('a prompt sent while the disk is full is not recorded, and the message says to run it again', async () => {
      cli.server.enqueue({ kind: 'reply', text: 'hello' });
      expect((await keel(cli.home, newSession('hi'))).code).toBe(0);
      const id = onlySessionId(cli.home);
      const before = eventsOf(cli.home, id);
      const filler = fillDisk(cli.home);
      const refused = await keel(cli.home, ['run', '--session', id, 'are you there?']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^keel: session ${id}: ${cli.home}/\\S+ could not be written: the disk is full \\([^)]+\\)\\. ` +
            `The prompt was not recorded; free space on that disk, then send it again \\(keel run --session ${id} PROMPT\\)\\n`,
        ),
      );
      expect(refused.stderr).not.toMatch(NO_STACK);
      fs.rmSync(filler);
      expect(eventsOf(cli.home, id)).toEqual(before);
      cli.server.enqueue({ kind: 'reply', text: 'here' });
      const again = await keel(cli.home, ['run', '--session', id, 'are you there?']);
      expect(again.code).toBe(0);
      expectWhole(eventsOf(cli.home, id));
      expect(rejected(cli.server)).toEqual([]);
    });

    it('a commit into a project whose disk is full: named, nothing recorded, and resume after freeing space writes it whole, once', async () => {
      // The project lives on its own small disk, with room left for part of the turn's files only; the home
      // has room for the checkout and the history store's copies.
      unmountTmpfs(cli.home);
      mountTmpfs(cli.home, '16m');
      const disk = path.join(cli.dir, 'disk');
      fs.mkdirSync(disk);
      mountTmpfs(disk, '2m');
      try {
        const folder = path.join(disk, 'project');
        fs.mkdirSync(folder);
        for (const name of ['a.txt', 'b.txt', 'c.txt']) fs.writeFileSync(path.join(folder, name), 'old\n');
        const filler = fillDisk(disk, 200 * 1024);
        cli.server.enqueue(
          {
            kind: 'reply',
            toolCalls: [
              {
                name: 'run_command',
                arguments: {
                  command: "for f in a b c; do head -c 150000 /dev/zero | tr '\\0' x > $f.txt; done",
                },
              },
            ],
          },
          { kind: 'reply', text: 'rewritten' },
        );
        const failed = await keel(
          cli.home,
          newSessionArgs({ project: folder, server: cli.server }, { policy: 'full-auto', prompt: 'rewrite' }),
        );
        const id = onlySessionId(cli.home);
        expect(failed.code).toBe(1);
        expect(failed.stderr).toMatch(
          new RegExp(
            `keel: session ${id}: ${folder}/\\S* ?could not be written: the disk is full \\([^)]+\\)\\. ` +
              `Everything recorded before is intact; free space on that disk, then \`keel resume ${id}\` continues the turn`,
          ),
        );
        expect(failed.stderr).not.toMatch(NO_STACK);
        expect(eventsOf(cli.home, id).filter((event) => event.kind === 'persistent_commit')).toEqual([]);

        fs.rmSync(filler);
        const resumed = await keel(cli.home, ['resume', id]);
        expect(resumed.code).toBe(0);
        const x = 'x'.repeat(150000);
        for (const name of ['a.txt', 'b.txt', 'c.txt'])
          expect(fs.readFileSync(path.join(folder, name), 'utf8')).toBe(x);
        expect(fs.readdirSync(folder).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
        const commits = eventsOf(cli.home, id).filter((event) => event.kind === 'persistent_commit');
        expect(commits).toHaveLength(1);
        const files = commits[0]?.kind === 'persistent_commit' ? commits[0].files : [];
        expect(files.map((file) => file.path).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
        expectWhole(eventsOf(cli.home, id));
        expect(rejected(cli.server)).toEqual([]);
      } finally {
        unmountTmpfs(disk);
      }
    });

    it('a session created while the disk is full is complete or absent, at every fill level', async () => {
      // From no byte left to enough for the log but not the checkout: each level fails somewhere else.
      const levels = [0, 40, 112, 250, 330, 560].map((kib) => kib * 1024);
      const outcomes: string[] = [];
      const seen = new Set<string>();
      for (const leave of levels) {
        const filler = fillDisk(cli.home, leave);
        cli.server.enqueue({ kind: 'reply', text: 'made' });
        const run = await keel(cli.home, newSession(`at ${leave}`));
        fs.rmSync(filler);
        outcomes.push(`${leave}: ${run.code}`);
        if (run.code !== 0) {
          expect(run.stderr).toMatch(/could not be written: the disk is full/);
          expect(run.stderr).not.toMatch(NO_STACK);
        }
        // No half-made thing is left in the home, listed or not.
        const leftovers = fs.readdirSync(cli.home).filter((name) => name.endsWith('.tmp'));
        expect(leftovers).toEqual([]);
        const folders = fs.existsSync(path.join(cli.home, 'sessions'))
          ? fs.readdirSync(path.join(cli.home, 'sessions'))
          : [];
        const listed = (await keel(cli.home, ['sessions', '--json'])).stdout;
        for (const id of folders.filter((folder) => !seen.has(folder))) {
          seen.add(id);
          // Every folder is a whole session: listed, its log readable from session_created, its checkout's config there.
          expect(listed).toContain(id);
          expect(eventsOf(cli.home, id)[0]?.kind).toBe('session_created');
          expect(fs.existsSync(path.join(cli.home, 'sessions', id, 'persistent.json'))).toBe(true);
          expect((await keel(cli.home, ['show', id])).code).toBe(0);
        }
        for (const id of listed.match(/[0-9a-z]{26}/g) ?? []) expect(folders).toContain(id);
      }
      // The campaign saw both: refusals and sessions made.
      expect(outcomes.some((outcome) => outcome.endsWith(': 1'))).toBe(true);
      expect(outcomes.some((outcome) => outcome.endsWith(': 0'))).toBe(true);
    }, 120_000);
  },
);
