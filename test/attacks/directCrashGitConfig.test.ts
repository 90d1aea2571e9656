import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { useCliFixture } from '../support/cliFixture.js';
import { keel } from '../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../support/sessionFixture.js';

// A --commit direct session in a folder that is not a git repository: a command makes `.git` at the top with
// a filter driver (`filter.x.clean`) and a `.gitattributes` naming it, and Keel is killed before the turn's
// end put the protected paths back. On resume the killed turn's change is recorded with git in that folder:
// had Keel taken the planted .git for the project's repository, its `git add` would run the planted filter
// outside the box. The killed turn's protected changes are put back and asked for first, as its end would.

let marker: string;

const cli = useCliFixture('keel-attack-directcrash-', {
  prepare: ({ dir, project }) => {
    fs.writeFileSync(path.join(project, 'README.md'), 'hello\n');
    marker = path.join(dir, 'PLANTED-FILTER-RAN');
  },
});

describe('attack: a top-level .git planted by a command in a direct session, then Keel killed', () => {
  const plant = () =>
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command:
                `git init -q && git config filter.x.clean 'touch ${marker}; cat' && ` +
                `printf '* filter=x\\n' > .gitattributes && echo b > kept.txt`,
            },
          },
        ],
      },
      { kind: 'reply', text: 'done' },
    );

  it('the next turn finds its config put back and asked for; the planted filter never runs', async () => {
    const sandbox = await detectSandbox();
    if (sandbox.kind !== 'bwrap') return console.warn(`skipped: needs bwrap (${sandbox.reason})`);
    plant();
    const run = await keel(
      cli.home,
      newSessionArgs(
        { project: cli.project, server: cli.server },
        { policy: 'full-auto', prompt: 'go', extra: ['--commit', 'direct'] },
      ),
    );
    expect(run.code, run.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    expect(fs.readFileSync(path.join(cli.project, 'kept.txt'), 'utf8')).toBe('b\n');
    cli.server.enqueue({ kind: 'reply', text: 'next' });
    const next = await keel(cli.home, ['run', '--session', id, 'next']);
    expect(fs.existsSync(marker), 'the planted filter ran outside the box').toBe(false);
    expect(next.stderr + run.stderr).toMatch(/commit_protected/);
  }, 90_000);

  it('resume puts the .git back and asks for it; the planted filter never runs', async () => {
    const sandbox = await detectSandbox();
    if (sandbox.kind !== 'bwrap') return console.warn(`skipped: needs bwrap (${sandbox.reason})`);
    plant();
    const killed = await keel(
      cli.home,
      newSessionArgs(
        { project: cli.project, server: cli.server },
        { policy: 'full-auto', prompt: 'go', extra: ['--commit', 'direct'] },
      ),
      { KEEL_CRASH_AT: 'after_tool_executed_before_result' },
    );
    expect(killed.code).not.toBe(0);
    const id = onlySessionId(cli.home);
    expect(fs.existsSync(path.join(cli.project, '.git', 'config')), 'the command ran').toBe(true);
    expect(fs.existsSync(marker), 'the planted filter ran before the kill').toBe(false);
    const resumed = await keel(cli.home, ['resume', id]);
    expect(fs.existsSync(marker), 'the planted filter ran outside the box').toBe(false);
    const config = path.join(cli.project, '.git', 'config');
    expect(
      fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '',
      'its config was put back',
    ).not.toContain('filter');
    expect(fs.readFileSync(path.join(cli.project, 'kept.txt'), 'utf8')).toBe('b\n');
    const request = eventsOf(cli.home, id).find(
      (event): event is EventOf<'approval_request'> =>
        event.kind === 'approval_request' && event.tool === 'commit_protected',
    );
    expect(request, `a commit_protected request (resume: ${resumed.stderr})`).toBeDefined();
    expect(request?.diff).toContain('filter');
    // The user's own git in the folder afterwards runs nothing planted either.
    try {
      execFileSync('git', ['status'], { cwd: cli.project, stdio: 'ignore' });
    } catch {
      // no repository any more: the point is the marker
    }
    expect(fs.existsSync(marker)).toBe(false);
  }, 90_000);
});
