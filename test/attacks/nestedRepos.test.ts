import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { useCliFixture } from '../support/cliFixture.js';
import { keel } from '../support/keelProcess.js';
import type { ScriptStep } from '../support/providerServer.js';
import { makeRepo } from '../main/core/persistent/support.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../support/sessionFixture.js';

// Issue 15, git family: `cd sub && git init && git config core.fsmonitor '<cmd>'` makes a nested repository
// whose config the user's next `git status` in sub/ would run. A nested .git made by a command is a protected
// path: held behind a commit_protected approval after the turn, even in full-auto, on a checkout and on
// --commit direct. A checkout commit cannot carry a nested repository: its files are asked for, not dropped.

let marker: string;

const cli = useCliFixture('keel-attack-nested-', {
  prepare: ({ dir, project }) => {
    makeRepo(project, { 'src/app.ts': 'export {};\n' });
    marker = path.join(dir, 'PLANTED-CODE-RAN');
  },
});

/** What the user does next in their folder, with their own plain git (their config, hooks on). */
function usersGit(cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  } catch {
    // Whether git succeeds is not the point; whether the planted code ran is.
  }
}

const read = (file: string) =>
  fs.existsSync(path.join(cli.project, file))
    ? fs.readFileSync(path.join(cli.project, file), 'utf8')
    : undefined;

/** A token in the nested repository's .env: the request shows the file, redacted. */
const TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;

const attack = (): ScriptStep => ({
  kind: 'reply',
  toolCalls: [
    {
      name: 'run_command',
      arguments: {
        command: `mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch ${marker}' && git remote add origin https://bob:${TOKEN}@example.com/r.git && echo a > a.txt && echo GITHUB_TOKEN=${TOKEN} > .env && echo b > ../kept.txt`,
      },
    },
  ],
});

async function attackTurn(extra: string[]): Promise<{ id: string; request: EventOf<'approval_request'> }> {
  cli.server.enqueue(attack(), { kind: 'reply', text: 'done' });
  const run = await keel(cli.home, newSessionArgs(cli, { policy: 'full-auto', prompt: 'go', extra }));
  expect(run.code, run.stderr).toBe(0);
  const id = onlySessionId(cli.home);
  // The ordinary change is in the folder; the nested repository's config is not.
  expect(read('kept.txt')).toBe('b\n');
  expect(read('sub/.git/config') ?? '').not.toContain('fsmonitor');
  usersGit(path.join(cli.project, 'sub'), 'status');
  usersGit(cli.project, 'status');
  expect(fs.existsSync(marker)).toBe(false);
  const request = eventsOf(cli.home, id).find(
    (event): event is EventOf<'approval_request'> =>
      event.kind === 'approval_request' && event.tool === 'commit_protected',
  );
  expect(request, 'a commit_protected request').toBeDefined();
  expect(request?.reason).toContain('sub/');
  expect(request?.diff).toContain('fsmonitor');
  expect(run.stderr).toContain(`approval needed (request ${request?.seq}): commit_protected`);
  return { id, request: request as EventOf<'approval_request'> };
}

async function needsBwrap(): Promise<boolean> {
  const sandbox = await detectSandbox();
  if (sandbox.kind === 'bwrap') return true;
  console.warn(`skipped: needs bwrap (${sandbox.reason})`);
  return false;
}

describe('attack: a nested repository made by a command, on --commit direct', () => {
  it('its config and hooks are put back and asked for; denied, they never return', async () => {
    if (!(await needsBwrap())) return;
    const { id, request } = await attackTurn(['--commit', 'direct']);
    expect(request.reason).toContain('sub/.git/config');
    expect(request.diff).toContain('example.com');
    expect(request.diff).not.toContain(TOKEN);
    expect((await keel(cli.home, ['deny', id, '--request', String(request.seq)])).code).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    expect((await keel(cli.home, ['run', '--session', id, 'next'])).code).toBe(0);
    expect(read('sub/.git/config') ?? '').not.toContain('fsmonitor');
    usersGit(path.join(cli.project, 'sub'), 'status');
    expect(fs.existsSync(marker)).toBe(false);
  }, 60_000);

  it('granted, the config is written back when the next turn starts', async () => {
    if (!(await needsBwrap())) return;
    const { id, request } = await attackTurn(['--commit', 'direct']);
    expect(
      (await keel(cli.home, ['approve', id, '--request', String(request.seq), '--scope', 'once'])).code,
    ).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    expect((await keel(cli.home, ['run', '--session', id, 'next'])).code).toBe(0);
    expect(read('sub/.git/config')).toContain('fsmonitor');
  }, 60_000);
});

describe('attack: a nested repository made by a command, on a checkout (--commit auto)', () => {
  it('its files are asked for, not dropped silently; granted, they reach the project without its .git', async () => {
    if (!(await needsBwrap())) return;
    const { id, request } = await attackTurn([]);
    expect(request.reason).toContain('sub/a.txt');
    expect(request.diff).toContain('+a');
    expect(request.diff).toContain('sub/.env');
    expect(request.diff).not.toContain(TOKEN);
    expect(read('sub/a.txt')).toBeUndefined();
    expect(
      (await keel(cli.home, ['approve', id, '--request', String(request.seq), '--scope', 'once'])).code,
    ).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    const next = await keel(cli.home, ['run', '--session', id, 'next']);
    expect(next.code, next.stderr).toBe(0);
    expect(read('sub/a.txt')).toBe('a\n');
    expect(fs.existsSync(path.join(cli.project, 'sub', '.git'))).toBe(false);
    usersGit(path.join(cli.project, 'sub'), 'status');
    expect(fs.existsSync(marker)).toBe(false);
  }, 60_000);

  it('denied, its files are dropped and the model is told', async () => {
    if (!(await needsBwrap())) return;
    const { id, request } = await attackTurn([]);
    expect((await keel(cli.home, ['deny', id, '--request', String(request.seq)])).code).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    expect((await keel(cli.home, ['run', '--session', id, 'next'])).code).toBe(0);
    expect(read('sub/a.txt')).toBeUndefined();
    const body = cli.server.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(body.messages)).toContain(
      '[not committed, the user denied it: the turn made a git repository',
    );
  }, 60_000);
});
