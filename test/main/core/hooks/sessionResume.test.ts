import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { detectSandbox } from '../../../../main/sandbox/box.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { writeUnder } from '../../../support/setupFiles.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { eventsOf, harnessFor } from '../harness/support.js';

/*
 * Issue #30: SessionStart's `resume` source through the front door. A harness is one Keel process: the first
 * prompt it runs of a session that already has turns (`keel run --session`, the app after a restart, an editor's
 * load) runs the SessionStart hooks with source `resume`, once; a session's first prompt is `startup`.
 */

let dir: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-hooks-resume-');
  server = await new ProviderServer().start();
});
afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('SessionStart sources across processes', () => {
  it('startup on the first prompt, resume on the first prompt of each later process, nothing in between', async (context) => {
    if ((await detectSandbox()).kind !== 'bwrap') context.skip();
    const home = path.join(dir, 'home');
    const userHome = path.join(dir, 'user-home');
    const project = makeRepo(path.join(dir, 'project'), { 'a.txt': 'a\n' });
    writeUnder(
      userHome,
      '.claude/settings.json',
      JSON.stringify({
        hooks: {
          SessionStart: [
            {
              matcher: 'startup|resume',
              hooks: [{ type: 'command', command: `jq -r '"source " + .source'` }],
            },
          ],
        },
      }),
    );
    const keelProcess = () =>
      harnessFor(home, server, { project }, { env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome } });
    const prompt = (harness: ReturnType<typeof keelProcess>, content: string) => {
      server.enqueue({ kind: 'reply', text: 'ok' });
      return generateHarness({ harness, session: 's', messages: [{ role: 'user', content }] });
    };
    const first = keelProcess();
    await first.sessions.getOrCreate({ id: 's', create: { policy: 'ask' } });
    await prompt(first, 'one');
    await prompt(first, 'two');
    const second = keelProcess();
    await prompt(second, 'three');
    await prompt(second, 'four');
    const sources = eventsOf(home, 's').flatMap((e) =>
      e.kind === 'hook_ran' ? [e.context] : e.kind === 'user_message' ? [e.content] : [],
    );
    expect(sources).toEqual(['source startup', 'one', 'two', 'source resume', 'three', 'four']);
  });
});
