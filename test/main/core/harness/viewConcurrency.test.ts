// Issue #36: a session's copy-on-write view used by more than one process, or by a process that outlives a turn:
// one mount owner per session (a real second Keel process), a reset while a background command still runs in the
// view, hooks outside a turn, and a command joining a background server's network. The real kernel overlay, the
// real bwrap box, the loopback provider.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { collectCheckouts } from '../../../../main/core/harness/checkoutStorage.js';
import { describeError } from '../../../../main/core/harness/describeError.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { sessionDir } from '../../../../main/core/paths.js';
import {
  pinViews,
  releaseIdleViews,
  stopAllViews,
  stopSessionViews,
} from '../../../../main/core/persistent/viewHolder.js';
import { readViewOwner } from '../../../../main/core/persistent/viewOwner.js';
import { listBackground, readBackground, stopSessionBackground } from '../../../../main/runner/background.js';
import type { ProviderServer } from '../../../support/providerServer.js';
import { writeUnder } from '../../../support/setupFiles.js';
import { spawnTypescript, waitForExit, waitForLine } from '../../store/support/childProcess.js';
import { ignoreForcedKind } from '../persistent/support.js';
import { viewHome } from './viewFixture.js';
import { callTool, eventsOf, filesOf, harnessFor, toolResultsSeen } from './support.js';

ignoreForcedKind();
let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let skip: string | undefined;

beforeAll(async () => {
  ({ dir, home, project, server, skip } = await viewHome('keel-view-conc-', {
    'src/app.ts': 'export const a = 1;\n',
    '.gitignore': '*.log\n*.flag\n',
  }));
});

afterAll(async () => {
  await stopSessionBackground(undefined, 'keel_ended');
  await server.close();
  await stopAllViews();
  fs.rmSync(dir, { recursive: true, force: true });
});

const HOLDER = path.join(import.meta.dirname, 'viewHolderProcess.ts');

async function turn(
  harness: ReturnType<typeof harnessFor>,
  session: string,
  ...steps: Parameters<ProviderServer['enqueue']>
) {
  const last = steps.at(-1);
  const ends = last?.kind === 'reply' && (last.toolCalls ?? []).length === 0;
  server.enqueue(...steps, ...(ends ? [] : [{ kind: 'reply' as const, text: 'done' }]));
  return generateHarness({ harness, session, messages: [{ role: 'user', content: 'go' }] });
}

describe('one process mounts a session’s views', () => {
  it('refuses a second live process with who holds them, keeps them from gc, and takes over a dead owner', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 'owned' });
    const dataDir = session.dataDir as string;
    const checkout = path.join(dataDir, 'workspace/persistent/project');
    const checkoutsDir = path.join(dataDir, 'checkouts');
    await turn(harness, 'owned', callTool('run_command', { command: 'echo mine > mine.log' }));
    expect(readViewOwner(checkoutsDir)?.pid).toBe(process.pid);

    // A second process (the app's terminal while this one holds the session) is refused, told who holds them.
    const refused = spawnTypescript(HOLDER, [dataDir, checkout]);
    expect(await waitForLine(refused, /^refused: /)).toMatch(
      new RegExp(`in use by .* \\(pid ${process.pid}\\); finish or stop`),
    );
    expect(await waitForExit(refused)).toBe(3);

    // Once this process lets the session go, the other mounts them (the real overlay, in its own holder).
    await stopSessionViews(dataDir);
    expect(readViewOwner(checkoutsDir)).toBeUndefined();
    const other = spawnTypescript(HOLDER, [dataDir, checkout]);
    const holding = await waitForLine(other, /^holding \d+$/);
    const otherHolder = Number(holding.split(' ')[1]);
    expect(fs.readFileSync(`/proc/${otherHolder}/root${checkout}/src/app.ts`, 'utf8')).toBe(
      'export const a = 1;\n',
    );
    expect(readViewOwner(checkoutsDir)?.pid).toBe(other.pid);

    // Now this process may neither mount them for a turn nor reclaim them.
    const blocked = await generateHarness({
      harness,
      session: 'owned',
      messages: [{ role: 'user', content: 'go' }],
    }).then(
      () => ({ code: 'ran', message: 'the turn ran' }),
      (error: unknown) => describeError(error),
    );
    // Said to the user as a busy session (the CLI's and the app's "locked"), naming the process that holds it.
    expect(blocked.code).toBe('locked');
    expect(blocked.message).toMatch(new RegExp(`in use by .* \\(pid ${other.pid}\\)`));
    const gc = await collectCheckouts(home, { idleMs: 0 });
    expect(gc.entries.find((entry) => entry.sessionId === 'owned')).toMatchObject({
      action: 'kept',
      reason: expect.stringMatching(new RegExp(`in use by .* \\(pid ${other.pid}\\)`)) as string,
    });
    expect(fs.existsSync(path.join(checkoutsDir, 'project', 'state.json'))).toBe(true);

    // Killed without letting go: its claim names a dead process, and the next turn here takes it over.
    other.kill('SIGKILL');
    await waitForExit(other);
    expect(readViewOwner(checkoutsDir)?.pid).toBe(other.pid);
    await turn(harness, 'owned', callTool('run_command', { command: 'cat src/app.ts' }));
    expect(toolResultsSeen(server).at(-1)).toMatch(/export const a = 1;/);
    expect(readViewOwner(checkoutsDir)?.pid).toBe(process.pid);
  });
});

describe('views let go once idle', () => {
  it('keeps them while a background command runs on them, lets them go once nothing uses them', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    await harness.sessions.getOrCreate({ id: 'idle' });
    const dataDir = sessionDir(home, 'idle');
    const checkout = path.join(dataDir, 'workspace/persistent/project');
    const checkoutsDir = path.join(dataDir, 'checkouts');
    await turn(
      harness,
      'idle',
      callTool('run_command', { command: 'echo up; sleep 300', background: true, ready_text: 'up' }),
    );
    // The turn is over, but its background command still runs in the view: kept, and still refused elsewhere.
    expect(await releaseIdleViews(dataDir)).toBe(false);
    expect(readViewOwner(checkoutsDir)?.pid).toBe(process.pid);
    const refused = spawnTypescript(HOLDER, [dataDir, checkout]);
    expect(await waitForLine(refused, /^refused: /)).toMatch(/background commands/);
    await waitForExit(refused);

    await stopSessionBackground(dataDir, 'session_stopped');
    // A turn of this process pins them (its tools reach them through the holder's root) until it ends.
    const unpin = pinViews(dataDir);
    expect(await releaseIdleViews(dataDir)).toBe(false);
    unpin();
    expect(await releaseIdleViews(dataDir)).toBe(true);
    expect(readViewOwner(checkoutsDir)).toBeUndefined();
    const other = spawnTypescript(HOLDER, [dataDir, checkout]);
    await waitForLine(other, /^holding \d+$/);
    expect(readViewOwner(checkoutsDir)?.pid).toBe(other.pid);
    // Stopped the ordinary way, it gives the claim up itself.
    other.kill('SIGTERM');
    expect(await waitForExit(other)).toBe(0);
    expect(readViewOwner(checkoutsDir)).toBeUndefined();
  });
});

describe('a reset while a background command runs in the view', () => {
  it('leaves the command its old view, gives the new turn a fresh one, and removes the old layers once unused', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    const session = await harness.sessions.getOrCreate({ id: 'bg' });
    const dataDir = session.dataDir as string;
    const checkout = path.join(dataDir, 'workspace/persistent/project');
    const stateDir = path.join(dataDir, 'checkouts/project');
    // bg.log is ignored: no commit takes it, a reset removes it. The command waits for a flag outside the view (a
    // host folder the box sees read-only) and then writes and reads in its own view.
    const flag = path.join(dir, 'flags', 'go.flag');
    fs.mkdirSync(path.dirname(flag), { recursive: true });
    const command =
      `echo old > bg.log; echo up; while [ ! -f ${flag} ]; do sleep 0.05; done; ` +
      'echo after > after.log; echo "bg sees $(cat bg.log)"; ls; echo bg-done; sleep 300';
    await turn(harness, 'bg', callTool('run_command', { command, background: true, ready_text: 'up' }));
    const [started] = listBackground(dataDir);
    expect(toolResultsSeen(server).at(-1)).toMatch(/up/);
    expect(started?.exit).toBeNull();

    // The next turn resets the view while the command still runs on the old mount.
    await turn(harness, 'bg', callTool('run_command', { command: 'cat bg.log; ls' }));
    expect(toolResultsSeen(server).at(-1)).toMatch(/bg\.log: No such file/);

    fs.writeFileSync(flag, '');
    const deadline = Date.now() + 20_000;
    while (!(readBackground(dataDir, started?.handle as string)?.output ?? '').includes('bg-done')) {
      if (Date.now() > deadline) throw new Error('the background command did not go on');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The command's view is still its own, whole: its earlier write, and the new one landed with it.
    expect(readBackground(dataDir, started?.handle as string)?.output).toMatch(/bg sees old/);
    // ...and not in the session's current view, nor in its layer: the old layers were set aside.
    expect(fs.existsSync(path.join(filesOf(checkout), 'after.log'))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, 'upper', 'after.log'))).toBe(false);
    const asides = () => fs.readdirSync(stateDir).filter((name) => name.startsWith('aside-'));
    expect(asides()).toHaveLength(1);
    const [aside] = asides();
    expect(fs.readFileSync(path.join(stateDir, aside as string, 'upper', 'after.log'), 'utf8')).toBe(
      'after\n',
    );

    // Still in use at the next reset and by gc: kept.
    await turn(harness, 'bg', { kind: 'reply', text: 'hi' });
    expect(asides()).toEqual([aside]);
    await session.files.write('/persistent/project/kept-for-review.txt', 'uncommitted');
    const kept = await collectCheckouts(home, { idleMs: 0 });
    expect(kept.entries.find((entry) => entry.sessionId === 'bg')?.reason).toMatch(/uncommitted/);
    expect(asides()).toEqual([aside]);
    // Once the command is stopped, gc removes it (the session's checkout kept for its uncommitted change)...
    await stopSessionBackground(dataDir, 'session_stopped');
    await collectCheckouts(home, { idleMs: 0 });
    expect(asides()).toEqual([]);
    expect(fs.existsSync(path.join(stateDir, 'state.json'))).toBe(true);
    // ...as the next reset does: a command left running sets the layers aside again, stopped it lets them go.
    await turn(
      harness,
      'bg',
      callTool('run_command', {
        command: 'echo again > bg.log; echo up; sleep 300',
        background: true,
        ready_text: 'up',
      }),
    );
    await turn(harness, 'bg', { kind: 'reply', text: 'hi' });
    expect(asides()).toHaveLength(1);
    await stopSessionBackground(dataDir, 'session_stopped');
    await turn(harness, 'bg', { kind: 'reply', text: 'hi' });
    expect(asides()).toEqual([]);
  });
});

describe('a command joining a background server’s network in a view', () => {
  it('reaches the server on localhost and sees the view', async (context) => {
    if (skip !== undefined) context.skip();
    const harness = harnessFor(home, server, { project });
    await harness.sessions.getOrCreate({ id: 'net' });
    const node = JSON.stringify(process.execPath);
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    await turn(
      harness,
      'net',
      callTool('run_command', {
        command: `${node} -e "require('http').createServer((q,s)=>s.end('hello '+q.url)).listen(${port},'127.0.0.1',()=>console.log('listening'))"`,
        background: true,
        ready_text: 'listening',
      }),
    );
    expect(toolResultsSeen(server).at(-1)).toMatch(/listening/);
    await turn(
      harness,
      'net',
      callTool('run_command', {
        command: `cat src/app.ts && ${node} -e "fetch('http://127.0.0.1:${port}/x').then(r=>r.text()).then(t=>console.log('got:'+t),e=>{console.log('failed:'+e.cause?.code);process.exit(3)})"`,
      }),
    );
    expect(toolResultsSeen(server).at(-1)).toMatch(/export const a = 1;\n[\s\S]*got:hello \/x/);
    await stopSessionBackground(sessionDir(home, 'net'), 'session_stopped');
  });
});

describe('hooks outside a turn in a view', () => {
  it('run in the mounted view (SessionEnd after this process let the views go)', async (context) => {
    if (skip !== undefined) context.skip();
    const userHome = path.join(dir, 'user-home');
    writeUnder(
      userHome,
      '.claude/settings.json',
      JSON.stringify({
        hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: 'cat src/app.ts' }] }] },
      }),
    );
    const harness = harnessFor(
      home,
      server,
      { project },
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', KEEL_USER_HOME: userHome } },
    );
    await harness.sessions.getOrCreate({ id: 'hooks' });
    await turn(harness, 'hooks', { kind: 'reply', text: 'hi' });
    // Nothing of the session is mounted in this process any more: the hook's box needs the view mounted first.
    await stopSessionViews(sessionDir(home, 'hooks'));
    await harness.endSessions({ reason: 'other' });
    const ends = eventsOf(home, 'hooks').filter(
      (e): e is EventOf<'hook_ran'> => e.kind === 'hook_ran' && e.event === 'SessionEnd',
    );
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      exitCode: 0,
      output: expect.stringContaining('export const a = 1;') as string,
    });
  });
});
