import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { ensureCliBuilt } from '../support/cli.js';
import { keel } from '../support/keelProcess.js';
import { ProviderServer, type ScriptStep } from '../support/providerServer.js';
import { eventsOf, newSessionArgs } from '../support/sessionFixture.js';

// Issue 15, "Smaller": with --commit direct the Keel home was visible inside the box when it lay outside /tmp
// and $HOME (the box hides those two whole), so a command read another session's events. Here the home
// really lies outside both: under /var/tmp, which the box mounts read-only from the host like the rest of /.

let dir: string;
let home: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'keel-attack-home-')));
  home = path.join(dir, 'home');
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const command = (line: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'run_command', arguments: { command: line } }],
});

const SECRET = 'ALPHA-PROMPT-MARKER';

describe.each([
  ['--commit direct', ['--commit', 'direct']],
  ['a checkout (--commit auto)', []],
])('attack: the Keel home outside /tmp and $HOME, on %s', (_, extra) => {
  it("another session's events and the home's files cannot be read from the box", async () => {
    const sandbox = await detectSandbox();
    if (sandbox.kind !== 'bwrap') {
      console.warn(`skipped: needs bwrap (${sandbox.reason})`);
      return;
    }
    expect(path.relative('/tmp', home).startsWith('..')).toBe(true);
    expect(path.relative(os.homedir(), home).startsWith('..')).toBe(true);
    // Another session in the same home, whose prompt holds the secret.
    const other = path.join(dir, 'other');
    fs.mkdirSync(other);
    server.enqueue({ kind: 'reply', text: 'ok' });
    const first = await keel(
      home,
      newSessionArgs({ project: other, server }, { policy: 'full-auto', prompt: SECRET }),
    );
    expect(first.code, first.stderr).toBe(0);
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    // The command names the secret split in two, so its own text in this session's log does not match.
    const [left, right] = [SECRET.slice(0, 6), SECRET.slice(6)];
    server.enqueue(
      command(`ls -a ${home} ${home}/sessions; grep -rl "${left}""${right}" ${home}; echo EXIT=$?`),
      { kind: 'reply', text: 'done' },
    );
    const before = new Set(fs.readdirSync(path.join(home, 'sessions')));
    const run = await keel(
      home,
      newSessionArgs({ project, server }, { policy: 'full-auto', prompt: 'look around', extra }),
    );
    expect(run.code, run.stderr).toBe(0);
    const id = fs.readdirSync(path.join(home, 'sessions')).find((name) => !before.has(name)) as string;
    const result = eventsOf(home, id).find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
    expect(result?.content).toBeDefined();
    const otherId = [...before][0] as string;
    expect(result?.content).not.toContain(otherId);
    expect(result?.content).not.toContain('sessions/');
    // grep found nothing (exit 1) or could not read the folder (exit 2): never a file.
    expect(result?.content).toMatch(/EXIT=[12]/);
  }, 60_000);
});
