import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideApproval } from '../../../../main/core/approvals/decide.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, harnessFor } from './support.js';

// The turn host reads the first request's git status while the turn gets ready (turnHost.ts), so git's run
// overlaps the turn's setup. A tool that may change the folder before that request drops what was read ahead.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-env-ahead-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export const a = 1;\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The text of the newest request's messages (the environment block rides in the last one). */
const lastRequestText = () => JSON.stringify(server.requests.at(-1)?.body);

describe("the environment block's git status read ahead", () => {
  it('is what the first request says, and a tool run before the request is seen by it', async () => {
    const harness = harnessFor(home, server, {}, { policy: 'ask' });
    await harness.sessions.getOrCreate({ id: 'env', create: { projectFolder: project, persistentDirs: {} } });
    server.enqueue(callTool('write_file', { path: 'new.txt', content: 'new\n' }));
    const first = await generateHarness({
      harness,
      session: 'env',
      messages: [{ role: 'user', content: 'add' }],
    });
    expect(first.outcome.status).toBe('awaiting_approval');
    expect(lastRequestText()).toContain('git status: clean');
    const log = SessionLog.open(home, 'env', { write: true });
    try {
      const decided = decideApproval(log.read(), { decision: 'grant', scope: 'once' });
      if (!decided.ok) throw new Error(decided.message);
      log.append(decided.event, { expectedLastSeq: log.lastSeq() });
    } finally {
      log.close();
    }
    // The resumed segment runs the granted write before its first request: that request must see new.txt.
    server.enqueue({ kind: 'reply', text: 'added' });
    const resumed = await generateHarness({ harness, session: 'env', messages: [] });
    expect(resumed.outcome.status).toBe('completed');
    expect(fs.readFileSync(path.join(project, 'new.txt'), 'utf8')).toBe('new\n');
    expect(lastRequestText()).toContain('?? new.txt');
  });

  it("runs no git over the tree for a new turn's first request when the reset left the checkout known clean", async () => {
    const harness = harnessFor(home, server, {}, { policy: 'ask' });
    await harness.sessions.getOrCreate({
      id: 'quiet',
      create: { persistentDirs: { project: { path: project, commit: 'auto' } } },
    });
    for (const content of ['first', 'second']) {
      server.enqueue({ kind: 'reply', text: 'ok' });
      const turn = await generateHarness({
        harness,
        session: 'quiet',
        messages: [{ role: 'user', content }],
      });
      expect(turn.outcome.status).toBe('completed');
      expect(lastRequestText()).toContain('git status: clean');
      // The checkout's own state says it (issue #36), as the reset trusts it: a file put there behind Keel's back
      // (never done by a tool, a command or a host write, which mark it) is not looked for by a git status.
      fs.writeFileSync(
        path.join(home, 'sessions', 'quiet', 'workspace', 'persistent', 'project', 'stray.txt'),
        'x\n',
      );
    }
  });
});
