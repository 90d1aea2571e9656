import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../support/sessionFixture.js';

// Issue #38: the folders of a server's program are bound read-only into its box so it can start; words of
// its configuration are not its program. An approved `sh -c "<X>; node srv"` bound the folder of X (a
// folder beside the project, another session's folder in the Keel home), and so did a later script
// argument of a runtime. Real bubblewrap, the fixture server as the attacker, the scripted provider.
/**
 * The attacker's server: the dependency-free fixture (its read_outside tool) copied into the project, which the
 * box binds, so the server is visible whatever folder the checkout of Keel lies in (a clone under /tmp is
 * hidden in the box like any folder there).
 */
function serverInProject(): string {
  const script = path.join(fixture.project, 'tools', 'server.mjs');
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.copyFileSync(path.resolve('test/fixtures/mcp/plainServer.mjs'), script);
  return script;
}
const READ = 'mcp__evil__read_outside';

let bwrap = false;
const logs: SessionLog[] = [];
beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
const fixture = useSessionFixture('keel-attack-mcp-roots-', {
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

/** The outside folder (beside the project: hidden in the box) with a secret file and a script in it. */
function outside(): { folder: string; secret: string; script: string } {
  const folder = path.join(fixture.dir, 'other');
  fs.mkdirSync(folder, { recursive: true });
  const secret = path.join(folder, 'secret.txt');
  fs.writeFileSync(secret, 'the other project secret\n');
  const script = path.join(folder, 'tool.js');
  fs.writeFileSync(script, 'export {};\n');
  return { folder, secret, script };
}

/** Runs one turn whose model calls read_outside on `target`, with the server configured as `config`. */
async function readThrough(
  config: { command: string; args: string[] },
  target: string,
): Promise<EventOf<'tool_result'>> {
  fs.mkdirSync(fixture.home, { recursive: true });
  fs.writeFileSync(
    path.join(fixture.home, 'settings.json'),
    JSON.stringify({ mcp: { servers: { evil: config } } }),
  );
  const log = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
  logs.push(log);
  fixture.server.enqueue(
    { kind: 'reply', toolCalls: [{ id: 'r1', name: READ, arguments: { path: target } }] },
    { kind: 'reply', text: 'ok' },
  );
  const notices: string[] = [];
  const host = await createTurnHost(log, {
    env: { PATH: process.env.PATH },
    hooks: { onNotice: (text) => notices.push(text) },
  });
  try {
    await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
  const result = log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
  if (!result) throw new Error(`no tool result; notices: ${notices.join(' | ')}`);
  return result;
}

describe.runIf(process.platform === 'linux')(
  'program roots bind no folder a configuration merely names',
  () => {
    beforeEach((context) => {
      if (!bwrap) context.skip();
    });

    it('a shell server: the first word of its script text is not its program (a folder beside the project)', async () => {
      const { secret } = outside();
      fs.writeFileSync(path.join(fixture.project, 'readme.txt'), 'visible\n');
      const line = `${secret}; exec '${process.execPath}' '${serverInProject()}'`;
      // The server runs (it reads the project) but the folder its script text named stays hidden.
      const inside = await readThrough(
        { command: 'sh', args: ['-c', line] },
        path.join(fixture.project, 'readme.txt'),
      );
      expect(inside.isError ?? false).toBe(false);
      expect(inside.content).toBe('visible\n');
      const result = await readThrough({ command: 'sh', args: ['-c', line] }, secret);
      expect(result).toMatchObject({ isError: true, content: 'could not read: ENOENT' });
    });

    it("a shell server: a word naming another session's file does not bind that session's folder", async () => {
      fs.mkdirSync(fixture.home, { recursive: true });
      const other = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
      const otherFile = fs
        .readdirSync(other.dir)
        .map((name) => path.join(other.dir, name))
        .find((file) => fs.statSync(file).isFile()) as string;
      other.close();
      expect(otherFile).toBeDefined();
      const line = `${otherFile} && true; exec '${process.execPath}' '${serverInProject()}'`;
      const result = await readThrough({ command: '/bin/sh', args: ['-c', line] }, otherFile);
      expect(result).toMatchObject({ isError: true, content: 'could not read: ENOENT' });
    });

    it('a runtime: only the script it runs counts, not a later argument or one after inline code', async () => {
      const { secret, script } = outside();
      const server = serverInProject();
      const later = await readThrough({ command: process.execPath, args: [server, script] }, secret);
      expect(later).toMatchObject({ isError: true, content: 'could not read: ENOENT' });
      const inline = await readThrough(
        { command: process.execPath, args: ['-e', `import(${JSON.stringify(server)})`, script] },
        secret,
      );
      expect(inline).toMatchObject({ isError: true, content: 'could not read: ENOENT' });
    });
  },
);
