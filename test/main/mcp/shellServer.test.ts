import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { detectSandbox, type SandboxInfo } from '../../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../../support/sessionFixture.js';

// A server configured as a shell command line (`sh -c "node /tmp/…/server.mjs"`, as many MCP READMEs show)
// whose script lives in a folder the box hides (/tmp): the box binds the program named inside the string,
// so the server starts and its tool runs. Real bubblewrap, a real server process, the scripted provider.
let sandbox: SandboxInfo;

beforeAll(async () => {
  sandbox = await detectSandbox();
});
const fixture = useSessionFixture('keel-mcp-shell-');

describe.runIf(process.platform === 'linux')('an MCP server started by sh -c (bubblewrap)', () => {
  beforeEach((context) => {
    if (sandbox.kind !== 'bwrap') context.skip();
  });

  it('starts from a hidden folder named only inside the command string, and its tool answers', async () => {
    const script = path.join(fixture.dir, 'tool', 'server.mjs');
    fs.mkdirSync(path.dirname(script), { recursive: true });
    fs.copyFileSync(path.resolve('test/fixtures/mcp/plainServer.mjs'), script);
    fs.mkdirSync(fixture.home, { recursive: true });
    const line = `exec '${process.execPath}' '${script}' --stdio`;
    fs.writeFileSync(
      path.join(fixture.home, 'settings.json'),
      JSON.stringify({ mcp: { servers: { plain: { command: '/bin/sh', args: ['-c', line] } } } }),
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
        expect(outcome, notices.join('\n')).toEqual({ status: 'completed', text: 'done' });
      } finally {
        await host.dispose?.();
      }
      const result = log
        .read()
        .filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === 'c1')
        .at(-1);
      expect(result?.isError ?? false).toBe(false);
      expect(result?.content).toBe('echo: hi');
    } finally {
      log.close();
    }
  });
});
