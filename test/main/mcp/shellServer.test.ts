import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../../support/sessionFixture.js';

// A server configured as a shell command line (`sh -c "node …/server.mjs"`, as many MCP READMEs show). The
// words of its script text bind nothing into the box (issue #38: they made any folder named there readable):
// from a visible folder it starts and answers; from a folder the box hides (/tmp) it fails saying how to
// configure it, and the same program configured directly starts. Real bubblewrap, real server processes.
let sandbox: SandboxInfo;

beforeAll(async () => {
  sandbox = await detectSandbox();
});
const fixture = useSessionFixture('keel-mcp-shell-');

/** One turn that calls the plain server's echo; its outcome, the tool result and the notices. */
async function echoThrough(server: { command: string; args: string[] }) {
  fs.mkdirSync(fixture.home, { recursive: true });
  fs.writeFileSync(
    path.join(fixture.home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { plain: server } } }),
  );
  const log: SessionLog = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
  try {
    fixture.server.enqueue(
      {
        kind: 'reply',
        text: '',
        toolCalls: [{ id: 'c1', name: 'mcp__plain__echo', arguments: { text: 'hi' } }],
      },
      { kind: 'reply', text: 'done' },
    );
    const notices: string[] = [];
    const host = await createTurnHost(log, {
      env: { PATH: process.env.PATH },
      hooks: { onNotice: (text) => notices.push(text) },
    });
    try {
      const outcome = await runTurn(host, { prompt: 'go' });
      const result = log
        .read()
        .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === 'c1')
        .at(-1);
      return { outcome, result, notices };
    } finally {
      await host.dispose?.();
    }
  } finally {
    log.close();
  }
}

describe.runIf(process.platform === 'linux')('an MCP server started by sh -c (bubblewrap)', () => {
  beforeEach((context) => {
    if (sandbox.kind !== 'bwrap') context.skip();
  });

  it('starts when its program is visible in the box, and its tool answers', async () => {
    // A copy in the project (bound into the box), so the test holds wherever the checkout of Keel lies: a
    // clone under /tmp is hidden in the box like any folder there.
    const script = path.join(fixture.project, 'tools', 'server.mjs');
    fs.mkdirSync(path.dirname(script), { recursive: true });
    fs.copyFileSync(path.resolve('test/fixtures/mcp/plainServer.mjs'), script);
    const line = `exec '${process.execPath}' '${script}' --stdio`;
    const { outcome, result, notices } = await echoThrough({ command: '/bin/sh', args: ['-c', line] });
    expect(outcome, notices.join('\n')).toEqual({ status: 'completed', text: 'done' });
    expect(result?.isError ?? false).toBe(false);
    expect(result?.content).toBe('echo: hi');
  });

  it('a program in a hidden folder named only in the script text fails saying how; named directly, it starts', async () => {
    const script = path.join(fixture.dir, 'tool', 'server.mjs');
    fs.mkdirSync(path.dirname(script), { recursive: true });
    fs.copyFileSync(path.resolve('test/fixtures/mcp/plainServer.mjs'), script);
    const line = `exec '${process.execPath}' '${script}' --stdio`;
    const shell = await echoThrough({ command: '/bin/sh', args: ['-c', line] });
    expect(shell.notices.join('\n')).toMatch(
      /MCP server "plain" failed to start: .*a shell's script text binds no folder into the box.*configure the program itself/,
    );
    const direct = await echoThrough({ command: process.execPath, args: [script, '--stdio'] });
    expect(direct.outcome, direct.notices.join('\n')).toEqual({ status: 'completed', text: 'done' });
    expect(direct.result?.content).toBe('echo: hi');
  });
});
