import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { loadAllCommands } from '../../../main/cli/commands/index.js';
import type { RegisterCommand } from '../../../main/cli/commands/index.js';
import { runCli } from '../../../main/cli/program.js';
import {
  ensureCliBuilt,
  holdSessionLease,
  makeTempDir,
  removeTempDir,
  runKeel,
  runKeelRaw,
} from '../../support/cli.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/harness-article-session.jsonl');
const fixture = fs.readFileSync(FIXTURE, 'utf8');
const ID = '01JNARTICLE0000000000000001';

let home: string;
beforeAll(async () => {
  await ensureCliBuilt();
  home = makeTempDir();
  expect(runKeel(home, ['import', FIXTURE, '--keep-id']).code).toBe(0);
}, 180_000);
afterAll(() => removeTempDir(home));

/** Asserts the run failed with `code` and exactly one stderr line (no stack frames), and returns that line. */
function expectOneLineError(
  run: { code: number | null; stdout: string; stderr: string },
  code: number,
): string {
  expect(run.code).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^keel: [^\n]+\n$/);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  return run.stderr.trimEnd();
}

describe('keel errors', () => {
  it.each([
    ['an unknown session', ['show', '01JNOPE'], 2, 'keel: no session 01JNOPE (see keel sessions)'],
    [
      'an unknown session to export',
      ['export', '01JNOPE'],
      2,
      'keel: no session 01JNOPE (see keel sessions)',
    ],
    [
      'an unknown session to project',
      ['payload', '01JNOPE'],
      2,
      'keel: no session 01JNOPE (see keel sessions)',
    ],
    [
      'a session id that is a path',
      ['show', '../../etc'],
      2,
      'keel: no session ../../etc (see keel sessions)',
    ],
    ['a misspelled flag', ['sessions', '--jsn'], 2, "keel: unknown option '--jsn' (Did you mean --json?)"],
    ['a misspelled command', ['sesions'], 2, "keel: unknown command 'sesions' (Did you mean sessions?)"],
    ['a missing argument', ['show'], 2, "keel: missing required argument 'session'"],
    [
      'a number that is not one',
      ['sessions', '--limit', 'ten'],
      2,
      "keel: option '--limit <n>' argument 'ten' is invalid. Expected a whole number of 1 or more.",
    ],
    [
      'a missing file',
      ['import', '/nonexistent/x.jsonl'],
      2,
      'keel: cannot read /nonexistent/x.jsonl: no such file or folder',
    ],
    [
      'an output folder that does not exist',
      ['export', ID, '-o', '/nonexistent/x.jsonl'],
      2,
      'keel: cannot write /nonexistent/x.jsonl: no such file or folder',
    ],
  ])('reports %s in one line', (_name, args, code, message) => {
    expect(expectOneLineError(runKeel(home, args), code)).toBe(message);
  });

  it('moves a corrupt index aside in one line and names a corrupt session log with its file', () => {
    const broken = makeTempDir();
    try {
      fs.writeFileSync(
        path.join(broken, 'index.sqlite'),
        'this is not a database, it is a text file '.repeat(50),
      );
      // The index is derived from the logs: it is moved aside and rebuilt (issue 20), never an error.
      const listed = runKeel(broken, ['sessions']);
      expect(listed.code).toBe(0);
      expect(listed.stderr).toMatch(
        /^keel: index\.sqlite was damaged \(file is not a database\); moved it to index\.sqlite\.damaged-\S+ and rebuilding it from the session logs\n$/,
      );
      fs.rmSync(path.join(broken, 'index.sqlite'));
      fs.mkdirSync(path.join(broken, 'sessions', 'abc'), { recursive: true });
      const events = path.join(broken, 'sessions', 'abc', 'events.sqlite');
      fs.writeFileSync(events, 'garbage '.repeat(100));
      expect(expectOneLineError(runKeel(broken, ['show', 'abc']), 1)).toContain(
        `keel: session abc: its log ${events} is damaged (file is not a database); restore that file`,
      );
    } finally {
      removeTempDir(broken);
    }
  });

  it('prints the stack only with KEEL_DEBUG=1', () => {
    const run = runKeel(home, ['show', '01JNOPE'], { env: { KEEL_DEBUG: '1' } });
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('keel: no session 01JNOPE (see keel sessions)');
    expect(run.stderr).toMatch(/^\s+at /m);
  });

  it('takes the home from KEEL_HOME when --home is not given', () => {
    const run = runKeelRaw(['sessions', '--json'], { env: { KEEL_HOME: home } });
    expect((JSON.parse(run.stdout) as { id: string }[]).map((s) => s.id)).toEqual([ID]);
  });

  it('prints help and exits 0 for --help, and exits 2 with help when no command is given', () => {
    const help = runKeelRaw(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: keel');
    for (const command of ['sessions', 'show', 'payload', 'export', 'import']) {
      expect(help.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    }
    const bare = runKeelRaw([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: keel');
  });
});

describe('a session another process is writing', () => {
  /** A writing command, as later commands (run, approve, compact) will be: it takes the writer lease. */
  const registerWriteProbe: RegisterCommand = (program, context) => {
    program
      .command('write-probe')
      .argument('<session>')
      .action((id: string) => {
        SessionLog.open(context.home(), id, { write: true }).close();
      });
  };

  async function runInProcess(
    args: readonly string[],
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      ['--home', home, ...args],
      {
        stdout: (text) => (stdout += text),
        stderr: (text) => (stderr += text),
        env: {},
        readStdin: () => Promise.resolve(''),
      },
      [...(await loadAllCommands()), registerWriteProbe],
    );
    return { code, stdout, stderr };
  }

  it('can still be read, and a writer gets one clear line naming the holder', async () => {
    const holder = await holdSessionLease(home, ID);
    try {
      // Reading needs no lease: the app can run a session while the CLI inspects it.
      expect(runKeel(home, ['export', ID])).toEqual({ code: 0, stdout: fixture, stderr: '' });
      expect(runKeel(home, ['show', ID]).code).toBe(0);

      const locked = await runInProcess(['write-probe', ID]);
      expect(locked).toEqual({
        code: 1,
        stdout: '',
        stderr: `keel: session ${ID} is in use by another Keel process (pid ${holder.pid}); wait for it to finish or stop it, then retry\n`,
      });
    } finally {
      await holder.release();
    }
    expect(await runInProcess(['write-probe', ID])).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
