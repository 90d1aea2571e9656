import { describe, expect, it } from 'vitest';
import { attentionSequence } from '../../../main/cli/attention.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { newSessionArgs } from '../../support/sessionFixture.js';

// Issue #32: `keel run` rings the terminal when the turn stops on an approval: OSC 9 where the terminal shows
// it as a notification, BEL elsewhere, nothing into a pipe unless KEEL_BELL=always.

describe('attentionSequence', () => {
  it('rings with OSC 9 on terminals that take it, BEL on the others and inside tmux', () => {
    expect(attentionSequence({ TERM_PROGRAM: 'iTerm.app' }, true, 'Keel: run_command needs approval')).toBe(
      '\u001b]9;Keel: run_command needs approval\u0007',
    );
    expect(attentionSequence({ WT_SESSION: 'x' }, true, 'hi')).toBe('\u001b]9;hi\u0007');
    expect(attentionSequence({ TERM: 'xterm-256color' }, true, 'hi')).toBe('\u0007');
    expect(attentionSequence({ TERM_PROGRAM: 'iTerm.app', TMUX: '/tmp/t' }, true, 'hi')).toBe('\u0007');
  });

  it('is silent into a pipe and with KEEL_BELL=off; KEEL_BELL=always rings anyway', () => {
    expect(attentionSequence({}, false, 'hi')).toBe('');
    expect(attentionSequence({ KEEL_BELL: 'off' }, true, 'hi')).toBe('');
    expect(attentionSequence({ KEEL_BELL: 'always' }, false, 'hi')).toBe('\u0007');
  });

  it('keeps control characters of the message out of the sequence', () => {
    expect(attentionSequence({ TERM_PROGRAM: 'WezTerm' }, true, 'a\u0007b\u001b]c')).toBe(
      '\u001b]9;a b ]c\u0007',
    );
  });
});

const cli = useCliFixture('keel-cli-attention-');

describe('keel run waiting on an approval', () => {
  it('rings once when the request is printed, and not when stderr is a pipe', async () => {
    const step = {
      kind: 'reply' as const,
      toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }],
    };
    cli.server.enqueue(step);
    const piped = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'go' }));
    expect(piped.code, piped.stderr).toBe(3);
    expect(piped.stderr).not.toContain('\u0007');
    cli.server.enqueue(step);
    const rung = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'go' }), {
      KEEL_BELL: 'always',
      TERM_PROGRAM: 'iTerm.app',
      TMUX: undefined,
      STY: undefined,
    });
    expect(rung.code, rung.stderr).toBe(3);
    expect(rung.stderr.split('\u001b]9;Keel: run_command needs approval\u0007')).toHaveLength(2);
  });
});
