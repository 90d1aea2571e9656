import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cliFixture.js';
import { keel } from '../support/keelProcess.js';
import { newSessionArgs } from '../support/sessionFixture.js';

// A session whose project folder is the Keel home, or a folder inside it, would have its tools (or its commit
// back) reach every other session's log, outputs and checkouts and the MCP approvals: refused when it is made.
const cli = useCliFixture('keel-attack-project-in-home-');

describe('attack: a project folder inside the Keel home', () => {
  it.each([
    ['the home itself, worked on directly', (home: string) => home, ['--commit', 'direct']],
    [
      'another session folder, worked on directly',
      (home: string) => path.join(home, 'sessions', 'victim'),
      ['--commit', 'direct'],
    ],
    ['a folder inside the home, on a checkout', (home: string) => path.join(home, 'sessions', 'victim'), []],
  ])('refuses %s, before any request and with nothing made', async (_name, folderOf, extra) => {
    // A home that already holds a session's folder with a secret in it.
    const victim = path.join(cli.home, 'sessions', 'victim');
    fs.mkdirSync(victim, { recursive: true });
    fs.writeFileSync(path.join(victim, 'secret.txt'), 'the other session\n');
    const folder = folderOf(cli.home);
    const args = newSessionArgs(
      { ...cli, project: folder },
      { policy: 'full-auto', prompt: 'read it', extra },
    );
    const run = await keel(cli.home, args);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`is inside Keel's home`);
    expect(run.stderr).toContain('choose a project folder outside it');
    expect(cli.server.requests).toEqual([]);
    expect(fs.readdirSync(path.join(cli.home, 'sessions'))).toEqual(['victim']);
  });

  it('still runs a session on a folder that holds the home (the home is hidden there)', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'fine' });
    const args = newSessionArgs(
      { ...cli, project: path.dirname(cli.home) },
      { policy: 'ask', prompt: 'hi', extra: ['--commit', 'direct'] },
    );
    const run = await keel(cli.home, args);
    expect(run.code, run.stderr).toBe(0);
  });
});
