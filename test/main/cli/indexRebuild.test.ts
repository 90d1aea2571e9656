import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, kinds, newSessionArgs } from '../../support/sessionFixture.js';

/*
 * Issue 20, item 2: index.sqlite is derived from the session logs and rebuilt from them. Deleted, damaged, or
 * missing one session's row (a create killed between its session_created commit and its registration), the
 * sessions on disk are listed, run, resumed as before; a damaged file is moved aside with a one-line notice.
 */

const cli = useCliFixture('keel-index-rebuild-');

const indexFiles = () => fs.readdirSync(cli.home).filter((name) => name.startsWith('index.sqlite'));
const removeIndex = () => {
  for (const name of indexFiles()) fs.rmSync(path.join(cli.home, name));
};
const listedIds = async (): Promise<string[]> => {
  const listed = await keel(cli.home, ['sessions', '--json', '--limit', '1000']);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { id: string }[]).map((session) => session.id).sort();
};

/** Two sessions made through `keel run`: one idle, one waiting for an approval. */
async function twoSessions(): Promise<{ idle: string; waiting: string }> {
  cli.server.enqueue({ kind: 'reply', text: 'hello' });
  expect((await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'hi' }))).code).toBe(0);
  const [idle] = fs.readdirSync(path.join(cli.home, 'sessions'));
  cli.server.enqueue({
    kind: 'reply',
    toolCalls: [{ name: 'run_command', arguments: { command: 'echo ran >> ran.txt' } }],
  });
  const asked = await keel(
    cli.home,
    newSessionArgs(cli, { policy: 'ask', prompt: 'run it', extra: ['--commit', 'direct'] }),
  );
  expect(asked.code, asked.stderr).toBe(3);
  const waiting = fs.readdirSync(path.join(cli.home, 'sessions')).find((id) => id !== idle);
  return { idle: idle as string, waiting: waiting as string };
}

/** After the index was lost: the list, a new turn on one session and the resumed approval of the other work. */
async function expectUsable(ids: { idle: string; waiting: string }) {
  expect(await listedIds()).toEqual([ids.idle, ids.waiting].sort());
  const listed = JSON.parse((await keel(cli.home, ['sessions', '--json'])).stdout) as {
    id: string;
    status: string;
    title?: string;
  }[];
  expect(listed.find((session) => session.id === ids.waiting)?.status).toBe('awaiting_approval');
  expect(listed.find((session) => session.id === ids.idle)?.title).toBe('hi');

  cli.server.enqueue({ kind: 'reply', text: 'again' });
  const again = await keel(cli.home, ['run', '--session', ids.idle, 'once more']);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toBe('again\n');

  const resumed = await keel(cli.home, ['resume', ids.waiting]);
  expect(resumed.code, resumed.stderr).toBe(3);
  cli.server.enqueue({ kind: 'reply', text: 'done' });
  const approved = await keel(cli.home, ['approve', ids.waiting, '--scope', 'once', '--resume']);
  expect(approved.code, approved.stderr).toBe(0);
  expect(fs.readFileSync(path.join(cli.project, 'ran.txt'), 'utf8')).toBe('ran\n');
  const search = await keel(cli.home, ['sessions', '--json', '--search', 'once more']);
  expect((JSON.parse(search.stdout) as { id: string }[]).map((session) => session.id)).toEqual([ids.idle]);
}

describe('index.sqlite is rebuilt from the session logs', () => {
  it('deleted: keel sessions lists every session again, run --session and resume work', async () => {
    const ids = await twoSessions();
    removeIndex();
    await expectUsable(ids);
  });

  it('damaged: moved aside with a one-line notice, rebuilt; reads of intact logs never blocked', async () => {
    const ids = await twoSessions();
    removeIndex();
    fs.writeFileSync(path.join(cli.home, 'index.sqlite'), 'x'.repeat(9000));
    const shown = await keel(cli.home, ['show', ids.idle]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/hello/);

    // show already moved it aside; damage it again so the list meets it itself.
    fs.writeFileSync(path.join(cli.home, 'index.sqlite'), Buffer.alloc(16_384));
    const listed = await keel(cli.home, ['sessions', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(
      /^keel: index\.sqlite was damaged \(file is not a database\); moved it to index\.sqlite\.damaged-[\dT-]+Z and rebuilding it from the session logs\n$/,
    );
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id).sort()).toEqual(
      [ids.idle, ids.waiting].sort(),
    );
    expect(indexFiles().filter((name) => name.includes('.damaged-'))).toHaveLength(2);
    await expectUsable(ids);
  });

  it('truncated: malformed pages are damage too', async () => {
    const ids = await twoSessions();
    const file = path.join(cli.home, 'index.sqlite');
    // The last connection to close folded the WAL into the file: cut the file in half.
    const whole = fs.readFileSync(file);
    for (const name of indexFiles()) fs.rmSync(path.join(cli.home, name));
    fs.writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 2)));
    const listed = await keel(cli.home, ['sessions', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(
      /^keel: index\.sqlite was damaged \(.+\); moved it to index\.sqlite\.damaged-/,
    );
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id).sort()).toEqual(
      [ids.idle, ids.waiting].sort(),
    );
  });

  it('a create killed between its session_created commit and its index row: found on the next open', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hello' });
    expect((await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'hi' }))).code).toBe(0);
    const [first] = fs.readdirSync(path.join(cli.home, 'sessions'));
    // The same state a kill leaves: the folder with its committed log and the creator's mark (a dead pid), no row.
    const other = makeTempDir('keel-index-other-');
    try {
      const log = SessionLog.create(other, {
        projectFolder: cli.project,
        provider: 'openai-compatible',
        model: 'scripted-model',
        baseUrl: cli.server.openaiBaseUrl,
        contextWindow: 32_000,
        toolMode: 'write',
        policy: 'ask',
      });
      const orphan = log.id;
      log.close();
      fs.cpSync(path.join(other, 'sessions', orphan), path.join(cli.home, 'sessions', orphan), {
        recursive: true,
      });
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      }).stdout;
      fs.writeFileSync(
        path.join(cli.home, 'sessions', orphan, 'creating.json'),
        JSON.stringify({ pid: Number(dead), hostname: os.hostname(), acquiredAt: new Date().toISOString() }),
      );
      expect(await listedIds()).toEqual([first, orphan].sort());
      expect(fs.existsSync(path.join(cli.home, 'sessions', orphan, 'creating.json'))).toBe(false);
      cli.server.enqueue({ kind: 'reply', text: 'found' });
      const run = await keel(cli.home, ['run', '--session', orphan, 'are you there']);
      expect(run.code, run.stderr).toBe(0);
      expect(kinds(eventsOf(cli.home, orphan))).toEqual([
        'session_created',
        'user_message',
        'assistant_message',
      ]);
    } finally {
      removeTempDir(other);
    }
  });

  it('many sessions: re-registered with progress lines', async () => {
    const source = makeTempDir('keel-index-many-');
    try {
      const ids: string[] = [];
      for (let n = 0; n < 60; n += 1) {
        const log = SessionLog.create(source, {
          projectFolder: cli.project,
          provider: 'openai-compatible',
          model: 'scripted-model',
          contextWindow: 32_000,
          toolMode: 'read-only',
          policy: 'read-only',
        });
        log.append({ kind: 'user_message', content: `question number ${n}` });
        ids.push(log.id);
        log.close();
      }
      fs.cpSync(path.join(source, 'sessions'), path.join(cli.home, 'sessions'), { recursive: true });
      const listed = await keel(cli.home, ['sessions', '--json', '--limit', '1000']);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id).sort()).toEqual(ids.sort());
      expect(listed.stderr).toBe(
        'keel: re-registering sessions from their logs: 0/60\nkeel: re-registered 60 sessions from their logs\n',
      );
      const question = await keel(cli.home, ['sessions', '--json', '--search', 'question number 42']);
      expect((JSON.parse(question.stdout) as { id: string }[]).length).toBeGreaterThan(0);
      // Registered once: the next list is quiet.
      expect((await keel(cli.home, ['sessions', '--json'])).stderr).toBe('');
    } finally {
      removeTempDir(source);
    }
  });
});
