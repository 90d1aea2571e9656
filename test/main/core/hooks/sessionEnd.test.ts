import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { withWritableSession } from '../../../../main/core/harness/lock.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { detectSandbox } from '../../../../main/sandbox/box.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { writeUnder } from '../../../support/setupFiles.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { eventsOf, harnessFor } from '../harness/support.js';

/*
 * Issue #30: SessionEnd through the front door. A harness is one Keel process: `endSessions` runs the SessionEnd
 * hooks (Claude Code's input: `reason`) of the sessions it ran a turn of, once per end, in the box, within the
 * end's budget; a deleted session (`clear`) ends whoever ran it last, unless its end already ran.
 */

let dir: string;
let server: ProviderServer;
let home: string;
let userHome: string;
let project: string;

beforeEach(async () => {
  dir = makeTemp('keel-hooks-end-');
  server = await new ProviderServer().start();
  home = path.join(dir, 'home');
  userHome = path.join(dir, 'user-home');
  project = makeRepo(path.join(dir, 'project'), { 'a.txt': 'a\n' });
});
afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const endHooks = (...hooks: { command: string; timeout?: number }[]) =>
  writeUnder(
    userHome,
    '.claude/settings.json',
    JSON.stringify({
      hooks: {
        SessionEnd: [{ hooks: hooks.map((hook) => ({ type: 'command', ...hook })) }],
        SessionStart: [{ matcher: 'resume', hooks: [{ type: 'command', command: 'echo resumed' }] }],
      },
    }),
  );
const keelProcess = (env: NodeJS.ProcessEnv = {}) =>
  harnessFor(
    home,
    server,
    { project },
    { env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome, ...env } },
  );
const prompt = (harness: ReturnType<typeof keelProcess>, session: string, content: string) => {
  server.enqueue({ kind: 'reply', text: 'ok' });
  return generateHarness({ harness, session, messages: [{ role: 'user', content }] });
};
const ends = (session: string) =>
  eventsOf(home, session).filter(
    (e): e is EventOf<'hook_ran'> => e.kind === 'hook_ran' && e.event === 'SessionEnd',
  );

describe.runIf(process.platform === 'linux')('SessionEnd (bubblewrap)', () => {
  beforeEach(async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
  });

  it('runs once per end with Claude Code’s input; a later end needs something new; clear ends a crashed run', async () => {
    endHooks({
      command: `jq -c '{hook_event_name, reason, permission_mode, sid: .session_id}'`,
      timeout: 10,
    });
    const first = keelProcess();
    await first.sessions.getOrCreate({ id: 's', create: { policy: 'ask' } });
    await first.sessions.getOrCreate({ id: 'idle', create: { policy: 'ask' } });
    await prompt(first, 's', 'one');
    await prompt(first, 's', 'two');
    const notices: string[] = [];
    await first.endSessions({ reason: 'other', onNotice: (text) => notices.push(text) });
    expect(notices).toEqual([]);
    const [ran] = ends('s');
    expect(JSON.parse(ran?.output ?? '{}')).toEqual({
      hook_event_name: 'SessionEnd',
      reason: 'other',
      permission_mode: 'bypassPermissions',
      sid: 's',
    });
    expect(ran).toMatchObject({ decision: 'none', exitCode: 0, source: '~/.claude/settings.json' });
    // The same end again (the host's exit after a close), or a session it never ran: nothing.
    await first.endSessions({ reason: 'other' });
    await first.endSessions({ reason: 'other', sessionId: 's' });
    await first.endSessions({ reason: 'clear', sessionId: 's' });
    await first.endSessions({ reason: 'clear', sessionId: 'idle' });
    expect(ends('s')).toHaveLength(1);
    expect(ends('idle')).toEqual([]);

    // An ended session's next prompt here is a resume; a process that dies without ending it leaves its end
    // to whoever deletes it.
    await prompt(first, 's', 'three');
    expect(eventsOf(home, 's').filter((e) => e.kind === 'hook_ran' && e.event === 'SessionStart')).toEqual([
      expect.objectContaining({ context: 'resumed' }),
    ]);
    const second = keelProcess();
    await second.endSessions({ reason: 'other' });
    expect(ends('s')).toHaveLength(1);
    await second.endSessions({ reason: 'clear', sessionId: 's' });
    expect(ends('s').map((run) => (JSON.parse(run.output) as { reason: string }).reason)).toEqual([
      'other',
      'clear',
    ]);
    const subjects = ends('s').map((run) => run.subject);
    expect(new Set(subjects).size).toBe(2);
  });

  it('a hook that hangs is stopped at the 1.5 s budget (or the environment’s); the end goes on', async () => {
    endHooks({ command: 'sleep 30' });
    const harness = keelProcess();
    await harness.sessions.getOrCreate({ id: 's', create: { policy: 'full-auto' } });
    await prompt(harness, 's', 'one');
    const notices: string[] = [];
    let started = Date.now();
    await harness.endSessions({ reason: 'other', onNotice: (text) => notices.push(text) });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(ends('s')).toEqual([
      expect.objectContaining({ decision: 'error', timedOut: true, exitCode: null }),
    ]);
    expect(ends('s')[0]?.reason).toContain('within 1.5 s');
    expect(notices.join('\n')).toContain('SessionEnd hook (~/.claude/settings.json) failed');

    // The environment's budget, as Claude Code reads it, wins over the default.
    const tight = keelProcess({ CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS: '300' });
    await prompt(tight, 's', 'two');
    started = Date.now();
    await tight.endSessions({ reason: 'other' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ends('s')[1]?.reason).toContain('within 0.3 s');
  });

  it('never waits on a turn that still holds the session: that end is given up, not run later', async () => {
    endHooks({ command: 'echo ended' });
    const harness = keelProcess();
    await harness.sessions.getOrCreate({ id: 's', create: { policy: 'full-auto' } });
    await prompt(harness, 's', 'one');
    let release = () => {};
    const held = withWritableSession(home, 's', () => new Promise<void>((resolve) => (release = resolve)));
    const notices: string[] = [];
    const started = Date.now();
    await harness.endSessions({ reason: 'other', onNotice: (text) => notices.push(text) });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(notices).toEqual(['the SessionEnd hooks of session s did not run: a turn still holds it']);
    release();
    await held;
    // Queued after the given-up end: once this ran, so did that one.
    await withWritableSession(home, 's', () => Promise.resolve());
    expect(ends('s')).toEqual([]);
  });
});
