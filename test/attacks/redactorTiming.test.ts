import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateHarness } from '../../main/core/harness/stream.js';
import { ProviderServer } from '../support/providerServer.js';
import { makeRepo, makeTemp } from '../main/core/persistent/support.js';
import { callTool, harnessFor, toolResultsSeen } from '../main/core/harness/support.js';

// The turn host's redactor reads the box's .env files when first used (turnHost.ts, workspaceHost.ts's
// turnTimeRedactor), but at the latest before anything of the turn may change the box. Otherwise a model
// could move a .env away with its first tool and read a copy of the value with its second: the redactor, built
// after the change, would not know the value any more.

const SECRET = 'plumHarbor8812QuartzVelvet';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-redactor-timing-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), {
    '.env': `PAYMENTS_TOKEN=${SECRET}\n`,
    'notes/deploy.txt': `the token we used last week: ${SECRET}\n`,
  });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a turn's redactor", () => {
  it('knows the .env values the box had before the turn’s first change, even when a command then moves the .env away', async () => {
    const harness = harnessFor(home, server, {}, { policy: 'full-auto' });
    await harness.sessions.getOrCreate({ id: 'r', create: { projectFolder: project, persistentDirs: {} } });
    // A command is previewed without the redactor (an edit's diff is redacted before it runs).
    server.enqueue(callTool('run_command', { command: 'mv .env old-settings.txt' }));
    server.enqueue(callTool('read_file', { path: 'notes/deploy.txt' }));
    server.enqueue({ kind: 'reply', text: 'done' });
    const result = await generateHarness({
      harness,
      session: 'r',
      messages: [{ role: 'user', content: 'tidy up' }],
    });
    expect(result.outcome.status).toBe('completed');
    // The command ran (no .env is left), and the copy was read: redacted all the same.
    expect(fs.existsSync(path.join(project, '.env'))).toBe(false);
    const seen = toolResultsSeen(server).join('\n');
    expect(seen).toContain('the token we used last week: [REDACTED');
    expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain(SECRET);
  });
});
