import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { recordDecision, type ApprovalDecision } from '../../main/core/approvals/decide.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { generateHarness } from '../../main/core/harness/stream.js';
import { ProviderServer } from '../support/providerServer.js';
import { git, makeRepo, makeTemp } from '../main/core/persistent/support.js';
import { callTool, eventsOf, harnessFor } from '../main/core/harness/support.js';

// Issue 15, git family: when the repository's git metadata changed during a turn (a hook planted, config
// edited, HEAD moved), Keel says exactly what changed and asks before anything is committed: an
// approval_request (commit_protected) in the log; approved, the next commit writes the turn's changes;
// denied, nothing is committed and the model is told. Through a session, real git, the scripted model.

let dir: string;
let home: string;
let project: string;
let marker: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-attack-gitmeta-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export {};\n' });
  marker = path.join(dir, 'PLANTED-CODE-RAN');
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const app = () => fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8');

/** A turn that writes src/app.ts while, during its last reply, `outside` runs (something outside Keel). */
async function turnWhile(outside: () => void): Promise<void> {
  const harness = harnessFor(home, server, { project });
  server.enqueue(callTool('write_file', { path: 'src/app.ts', content: 'export const v = 5;\n' }), {
    kind: 'reply',
    text: 'written, now finishing up',
    delayMs: 100,
  });
  const turn = generateHarness({ harness, session: 'meta', messages: [{ role: 'user', content: 'go' }] });
  while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  outside();
  await turn;
}

/** A turn during which something outside Keel edits .git/config. */
async function turnWithMetadataChange(): Promise<EventOf<'approval_request'>> {
  await turnWhile(() => git(project, 'config', 'core.fsmonitor', `touch ${marker}`));
  expect(app()).toBe('export {};\n');
  const request = eventsOf(home, 'meta').find(
    (event): event is EventOf<'approval_request'> =>
      event.kind === 'approval_request' && event.tool === 'commit_protected',
  );
  expect(request, 'a commit_protected request').toBeDefined();
  expect(request?.reason).toMatch(
    /^nothing was committed to project: its git metadata changed since the turn began \(\.git\/config changed\); check these files in the project folder\. The turn's changes \(src\/app\.ts\) reach project only if you approve/,
  );
  expect(request?.diff).toContain('+export const v = 5;');
  return request as EventOf<'approval_request'>;
}

function decide(decision: ApprovalDecision): void {
  const log = SessionLog.open(home, 'meta', { write: true });
  try {
    expect(recordDecision(log, decision).ok).toBe(true);
  } finally {
    log.close();
  }
}

async function nextTurn(): Promise<void> {
  server.enqueue({ kind: 'reply', text: 'next' });
  await generateHarness({
    harness: harnessFor(home, server, { project }),
    session: 'meta',
    messages: [{ role: 'user', content: 'next' }],
  });
}

describe('attack: git metadata changed during a turn', () => {
  it('asks before committing; approved, the next turn start commits the changes', async () => {
    const request = await turnWithMetadataChange();
    decide({ requestSeq: request.seq, decision: 'grant', scope: 'once' });
    await nextTurn();
    expect(app()).toBe('export const v = 5;\n');
    const commits = eventsOf(home, 'meta').filter(
      (event): event is EventOf<'persistent_commit'> => event.kind === 'persistent_commit',
    );
    expect(commits.at(-1)?.files.map((file) => file.path)).toEqual(['src/app.ts']);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('denied, nothing is committed and the model is told', async () => {
    const request = await turnWithMetadataChange();
    decide({ requestSeq: request.seq, decision: 'deny', reason: 'I did not edit the config' });
    await nextTurn();
    expect(app()).toBe('export {};\n');
    expect(eventsOf(home, 'meta').some((event) => event.kind === 'persistent_commit')).toBe(false);
    const body = server.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const told = body.messages.filter(
      (message) =>
        message.role === 'user' &&
        typeof message.content === 'string' &&
        message.content.startsWith('[not committed, the user denied it (I did not edit the config): nothing'),
    );
    expect(told).toHaveLength(1);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("git's own housekeeping (gc writing info/refs, packing refs) is not a change: the turn commits", async () => {
    // An auto gc that the user's last `git commit` left running in the background repacks, packs refs and
    // writes .git/info/refs (update-server-info); none of it makes git run or read anything new.
    await turnWhile(() => git(project, 'gc', '--quiet'));
    expect(fs.existsSync(path.join(project, '.git', 'info', 'refs'))).toBe(true);
    expect(app()).toBe('export const v = 5;\n');
    expect(eventsOf(home, 'meta').some((event) => event.kind === 'approval_request')).toBe(false);
  });
});
