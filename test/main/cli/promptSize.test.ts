import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, onlySessionId } from '../../support/sessionFixture.js';

/*
 * Issue 37: the prompt-size rule of the core (checkPromptSize, beside guardNewTurn) in `keel run`: a prompt the
 * model's window cannot take is refused with a sentence before a session is made, and before anything is added
 * to an existing one; nothing reaches the provider.
 */

const cli = useCliFixture('keel-cli-prompt-size-');

const run = (prompt: string, extra: string[] = []) => [
  'run',
  ...extra,
  ...(extra.includes('--session')
    ? []
    : [
        '--project',
        cli.project,
        '--provider',
        'openai-compatible',
        '--base-url',
        cli.server.openaiBaseUrl,
        '--model',
        'scripted-model',
        '--context-window',
        '2000',
        '--policy',
        'ask',
      ]),
  prompt,
];

describe('keel run and a prompt larger than the model’s window', () => {
  it('refuses it in words, makes no session and sends nothing; a session refuses it the same way', async () => {
    const big = 'word '.repeat(4_000);
    const refused = await keel(cli.home, run(big));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/This message is too long for scripted-model: it is about [\d,]+ tokens/);
    expect(refused.stderr).toContain('at most 1,500 of the model');
    expect(refused.stderr).not.toMatch(/at \S+:\d+:\d+/);
    expect(
      fs.existsSync(path.join(cli.home, 'sessions')) ? fs.readdirSync(path.join(cli.home, 'sessions')) : [],
    ).toEqual([]);
    expect(cli.server.requests).toHaveLength(0);

    cli.server.enqueue({ kind: 'reply', text: 'Small is fine.' });
    const small = await keel(cli.home, run('a small prompt'));
    expect(small.code, small.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    const again = await keel(cli.home, run(big, ['--session', id]));
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('This message is too long for scripted-model');
    expect(eventsOf(cli.home, id).filter((event) => event.kind === 'user_message')).toHaveLength(1);
    expect(cli.server.requests).toHaveLength(1);
  });
});
