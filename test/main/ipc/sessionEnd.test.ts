import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { writeUnder } from '../../support/setupFiles.js';
import { scriptedSessionInput, useIpcFixture } from './support.js';

// Issue #30: the app and keel serve end their sessions: a deleted session (SessionEnd `clear`, before its folder
// goes), and every session the process ran when it shuts down (`other`; the app's quit says `prompt_input_exit`),
// each once. The hooks are real scripts in the box; they write into the project (the sessions work on it directly).

const userHome = (dir: string) => path.join(dir, 'user-home');
const ipc = useIpcFixture('keel-ipc-end-', {
  prepare: ({ dir }) =>
    writeUnder(
      userHome(dir),
      '.claude/settings.json',
      JSON.stringify({
        hooks: {
          SessionEnd: [
            {
              hooks: [
                {
                  type: 'command',
                  command: `jq -r '.session_id + " " + .reason' >> "$CLAUDE_PROJECT_DIR/ended"`,
                  timeout: 10,
                },
              ],
            },
          ],
        },
      }),
    ),
  handlers: ({ home, dir }) =>
    createHandlers({
      home,
      mode: 'serve',
      version: '1',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KEEL_USER_HOME: userHome(dir) },
    }),
});
const { call, waitForPush } = ipc;

async function sessionWithTurn(): Promise<string> {
  const { session } = await call('sessions.create', scriptedSessionInput(ipc, { checkout: 'direct' }));
  ipc.server.enqueue({ kind: 'reply', text: 'hi' });
  const { turnId } = await call('turns.send', { sessionId: session.id, prompt: 'hello' });
  await waitForPush('session.status', (p) => p.sessionId === session.id && p.turnId === turnId && !p.running);
  return session.id;
}
const ended = () =>
  fs.existsSync(path.join(ipc.project, 'ended'))
    ? fs.readFileSync(path.join(ipc.project, 'ended'), 'utf8').split('\n').filter(Boolean)
    : [];

describe.runIf(process.platform === 'linux')('SessionEnd in the app and keel serve', () => {
  beforeEach(async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
  });

  it('a deleted session ends as clear; a shutdown ends the others it ran, once each', async () => {
    const deleted = await sessionWithTurn();
    const kept = await sessionWithTurn();
    const { session: idle } = await call('sessions.create', scriptedSessionInput(ipc));
    await call('sessions.delete', { sessionId: deleted, confirm: deleted });
    expect(ended()).toEqual([`${deleted} clear`]);
    await call('sessions.delete', { sessionId: idle.id, confirm: idle.id });
    expect(ended()).toEqual([`${deleted} clear`]);

    await ipc.handlers.close('prompt_input_exit');
    await ipc.handlers.close();
    expect(ended()).toEqual([`${deleted} clear`, `${kept} prompt_input_exit`]);
  });
});
