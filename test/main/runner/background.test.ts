import path from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listBackground,
  readBackground,
  readBackgroundSettled,
  sessionNetwork,
  startBackground,
  stopBackground,
  stopSessionBackground,
  takeUnrecordedEnds,
} from '../../../main/runner/background.js';
import { runCommand } from '../../../main/runner/boxedCommand.js';
import { findMarkedProcesses } from '../../../main/runner/processTree.js';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import { boxedSandbox, createArea, type RunnerArea } from './runnerFixtures.js';

/*
 * Issue #32, background commands in the real box: a server started in the background answers a later command of
 * the same session on localhost (that command joins the background command's network namespace), is not
 * reachable from outside the box, and dies with its whole tree when stopped.
 */

let area: RunnerArea;
let sandbox: SandboxInfo;
beforeAll(async () => {
  area = createArea();
  sandbox = await boxedSandbox();
});
afterAll(() => area.cleanup());

const node = JSON.stringify(process.execPath);
/** A tiny HTTP server in the box: answers `hello <path>`, logs each request, says when it listens. */
const serverCommand = (port: number): string =>
  `${node} -e "require('http').createServer((q,s)=>{console.log('GET '+q.url);s.end('hello '+q.url)}).listen(${port},'127.0.0.1',()=>console.log('listening'))"`;
const clientCommand = (port: number, url: string): string =>
  `${node} -e "fetch('http://127.0.0.1:${port}${url}').then(r=>r.text()).then(t=>console.log('got:'+t),e=>{console.log('failed:'+e.cause?.code);process.exit(3)})"`;

function options(name: string, command: string) {
  return {
    command,
    workspace: area.workspace,
    sandbox,
    artifactPath: path.join(area.artifacts, `${name}.log`),
  };
}

/** Resolves true when something on the host's loopback accepts a connection on `port`. */
function reachableFromHost(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function gone(runIds: string[], ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = runIds.flatMap((id) => findMarkedProcesses(id));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(process.platform !== 'linux')('background commands in the box', () => {
  it('serves a later command of the session on localhost, not the host, and dies when stopped', async () => {
    const key = path.join(area.root, 'session-a');
    const port = 41_000 + Math.floor(Math.random() * 2000);
    const started = await startBackground(key, 'bg-1', options('bg-1', serverCommand(port)), {
      waitMs: 10_000,
      until: 'listening',
    });
    expect(started.exit).toBeNull();
    expect(started.output).toContain('listening');
    const join = sessionNetwork(key);
    expect(join).not.toBeNull();

    // A joined command with an allowlist bridges the proxy on a port of its own (the namespace's 3128 may be taken),
    // and holds no namespace fd of the launcher's.
    const proxied = await runCommand({
      ...options('proxied', 'echo "proxy=$HTTP_PROXY"; ls /proc/self/fd | tr "\\n" " "'),
      network: { allow: ['example.invalid'] },
      ...(join === null ? {} : { joinNetwork: join }),
    });
    expect(proxied.excerpt).toMatch(/proxy=http:\/\/127\.0\.0\.1:3\d{4}\b/);
    expect(proxied.excerpt).not.toContain(':3128');
    expect(proxied.excerpt).toMatch(/^0 1 2 3 $/m);

    const fetched = await runCommand({
      ...options('client', clientCommand(port, '/one')),
      ...(join === null ? {} : { joinNetwork: join }),
    });
    expect(fetched.excerpt).toContain('got:hello /one');
    // A command of another session (its own namespace) finds nothing there.
    const other = await runCommand(options('other', clientCommand(port, '/two')));
    expect(other.excerpt).toContain('failed:ECONNREFUSED');
    expect(await reachableFromHost(port)).toBe(false);

    const read = await readBackgroundSettled(key, 'bg-1', started.cursor);
    expect(read?.output).toContain('GET /one');
    expect(read?.output).not.toContain('listening');
    expect(read?.output).not.toContain('/two');

    const runIds = findRunIds(key);
    const stopped = await stopBackground(key, 'bg-1');
    expect(stopped?.exit?.aborted).toBe(true);
    expect(await gone(runIds)).toEqual([]);
    // Its namespace ended with it: the next command gets one of its own again.
    expect(sessionNetwork(key)).toBeNull();
  });

  it('stops every background command of a session at once', async () => {
    const key = path.join(area.root, 'session-b');
    await startBackground(key, 'w1', options('w1', 'echo one; sleep 60'), { waitMs: 5000, until: 'one' });
    await startBackground(key, 'w2', options('w2', 'echo two; sleep 60'), { waitMs: 5000, until: 'two' });
    const runIds = findRunIds(key);
    expect(runIds.length).toBe(2);
    expect(runIds.flatMap((id) => findMarkedProcesses(id)).length).toBeGreaterThan(0);
    expect(await stopSessionBackground(key, 'session_stopped')).toBe(2);
    expect(await gone(runIds)).toEqual([]);
    expect(readBackground(key, 'w1')).toBeNull();
    // Forgotten, but their ends wait for the host to record them, once.
    expect(takeUnrecordedEnds(key)).toMatchObject([
      { handle: 'w1', reason: 'session_stopped', command: 'echo one; sleep 60' },
      { handle: 'w2', reason: 'session_stopped' },
    ]);
    expect(takeUnrecordedEnds(key)).toEqual([]);
  });
});

/** The run ids of the session's background commands (their processes carry them as the run marker). */
function findRunIds(key: string): string[] {
  return listBackground(key).flatMap((entry) => (entry.runId === null ? [] : [entry.runId]));
}
