import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, kinds, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

/*
 * Issue 20, item 3: `keel run --session S "prompt"` while an approval is pending used to exit 3 silently and
 * append the prompt anyway. It now refuses, appends nothing, and prints the pending request with how to
 * answer it.
 */

const cli = useCliFixture('keel-pending-prompt-');

describe('keel run --session while an approval is pending', () => {
  it('refuses the prompt, appends nothing, and prints the request and how to answer it', async () => {
    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }],
    });
    const asked = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'go' }));
    expect(asked.code, asked.stderr).toBe(3);
    const id = onlySessionId(cli.home);
    const before = kinds(eventsOf(cli.home, id));
    const request = eventsOf(cli.home, id).find((event) => event.kind === 'approval_request');

    const run = await keel(cli.home, ['run', '--session', id, 'something else']);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`keel: session ${id} is waiting for an approval; nothing was added.`);
    expect(run.stderr).toContain(`keel: approval needed (request ${request?.seq}): run_command`);
    expect(run.stderr).toContain(`approve: keel approve ${id} --request ${request?.seq} --scope`);
    expect(run.stderr).toContain(`deny:    keel deny ${id} --request ${request?.seq}`);
    expect(kinds(eventsOf(cli.home, id))).toEqual(before);
  });
});
