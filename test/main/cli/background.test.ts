import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBoxProcesses, recordedRunIds } from '../../support/boxProbe.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel, startKeel } from '../../support/keelProcess.js';
import {
  checkoutPath,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  rejected,
} from '../../support/sessionFixture.js';

// Issue #32, background commands through `keel run` and the scripted provider: a server started in the
// background answers the session's next command on localhost, its output is read and it is stopped, all
// recorded; and a SIGKILLed Keel leaves none of it running.

const cli = useCliFixture('keel-background-');
const node = JSON.stringify(process.execPath);
const serverCommand = (port: number) =>
  `${node} -e "require('http').createServer((q,s)=>{console.log('GET '+q.url);s.end('hello '+q.url)}).listen(${port},'127.0.0.1',()=>console.log('listening'))"`;
const clientCommand = (port: number) =>
  `${node} -e "fetch('http://127.0.0.1:${port}/cli').then(r=>r.text()).then(t=>console.log('got:'+t),e=>{console.log('failed:'+e.cause?.code);process.exit(3)})"`;
const run = (prompt: string) => newSessionArgs(cli, { policy: 'full-auto', prompt });

describe.skipIf(process.platform !== 'linux')('keel run with a background command', () => {
  it('starts a server, reaches it from the next command, reads its output and stops it', async () => {
    const port = 43_000 + Math.floor(Math.random() * 2000);
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            id: 'srv',
            name: 'run_command',
            arguments: { command: serverCommand(port), background: true, ready_text: 'listening' },
          },
        ],
      },
      {
        kind: 'reply',
        toolCalls: [{ id: 'get', name: 'run_command', arguments: { command: clientCommand(port) } }],
      },
      { kind: 'reply', toolCalls: [{ id: 'out', name: 'command_output', arguments: { handle: 'bg-srv' } }] },
      { kind: 'reply', toolCalls: [{ id: 'stop', name: 'stop_command', arguments: { handle: 'bg-srv' } }] },
      {
        kind: 'reply',
        toolCalls: [{ id: 'again', name: 'command_output', arguments: { handle: 'bg-nope' } }],
      },
      { kind: 'reply', text: 'served' },
    );
    const result = await keel(cli.home, run('serve and check'));
    expect(result.code, result.stderr).toBe(0);
    expect(rejected(cli.server)).toEqual([]);
    const events = eventsOf(cli.home, onlySessionId(cli.home));
    const resultOf = (id: string) => {
      const found = events.find((e) => e.kind === 'tool_result' && e.toolCallId === id);
      return found?.kind === 'tool_result' ? found.content : '';
    };
    expect(resultOf('srv')).toMatch(/started in the background as bg-srv[\s\S]*listening/);
    expect(resultOf('get')).toContain('got:hello /cli');
    expect(resultOf('out'), resultOf('out')).toMatch(/bg-srv is running[\s\S]*GET \/cli/);
    expect(resultOf('stop')).toContain('[bg-srv stopped]');
    expect(resultOf('again')).toMatch(/no background command bg-nope was started in this session/);
    const background = events.filter((e) => e.kind.startsWith('background_'));
    expect(background.map((e) => e.kind)).toEqual([
      'background_started',
      'background_output',
      'background_output',
      'background_exited',
    ]);
    expect(background[0]).toMatchObject({ handle: 'bg-srv', toolCallId: 'srv' });
    expect(background[3]).toMatchObject({ handle: 'bg-srv', reason: 'stopped' });
    // Each recorded right after its call's result.
    const started = events.findIndex((e) => e.kind === 'background_started');
    expect(events[started - 1]).toMatchObject({ kind: 'tool_result', toolCallId: 'srv' });
    expect(
      findBoxProcesses({ runIds: recordedRunIds(cli.home), folder: path.join(cli.home, 'sessions') }),
    ).toEqual([]);
  });

  it('ends a background command the turn left running when keel run ends', async () => {
    const token = `keel-bg-end-${process.pid}-${Date.now()}`;
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            id: 'left',
            name: 'run_command',
            arguments: { command: `: ${token}; echo up; sleep 300`, background: true, ready_text: 'up' },
          },
        ],
      },
      { kind: 'reply', text: 'left it running' },
    );
    const started = Date.now();
    const result = await keel(cli.home, run('start and leave'));
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(findBoxProcesses({ runIds: recordedRunIds(cli.home), token })).toEqual([]);
    // Its end is in the log when keel run has ended (not left for a resume to find).
    const ends = eventsOf(cli.home, onlySessionId(cli.home)).filter((e) => e.kind === 'background_exited');
    expect(ends).toMatchObject([{ handle: 'bg-left', reason: 'keel_ended', outsideCall: true }]);
  });

  it('leaves nothing running when Keel is SIGKILLed while its background command runs', async () => {
    const token = `keel-bg-${process.pid}-${Date.now()}`;
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            id: 'bg',
            name: 'run_command',
            arguments: { command: `: ${token}; echo up; sleep 300`, background: true, ready_text: 'up' },
          },
        ],
      },
      {
        kind: 'reply',
        toolCalls: [
          { id: 'fg', name: 'run_command', arguments: { command: `: ${token}; touch waiting; sleep 60` } },
        ],
      },
      { kind: 'reply', text: 'never' },
    );
    const keelRun = startKeel(cli.home, run('start and wait'));
    await keelRun.waitFor(/touch waiting/, 'stderr');
    // The session's commands run in its checkout of the project.
    const waiting = checkoutPath(cli.home, onlySessionId(cli.home), 'waiting');
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(waiting) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(fs.existsSync(waiting), keelRun.stderr()).toBe(true);
    const criteria = { runIds: recordedRunIds(cli.home), folder: path.join(cli.home, 'sessions'), token };
    expect(findBoxProcesses(criteria).length).toBeGreaterThan(0);
    keelRun.child.kill('SIGKILL');
    await keelRun.done;
    let left = findBoxProcesses(criteria);
    for (let i = 0; i < 120 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      left = findBoxProcesses(criteria);
    }
    expect(left).toEqual([]);

    // Resumed, the session knows it is gone (recorded, said) and never starts it again.
    const id = onlySessionId(cli.home);
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.stderr).toMatch(
      /background command bg-bg .* ended with the Keel that ran it; it is not started again/,
    );
    const ends = eventsOf(cli.home, id).filter((e) => e.kind === 'background_exited');
    expect(ends).toMatchObject([{ handle: 'bg-bg', reason: 'keel_ended' }]);
    expect(findBoxProcesses(criteria)).toEqual([]);
  });
});
