import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json: the module is loaded at run time, described by its shape here.
type Trigger = { kind: 'command' | 'mention'; query: string; start: number; end: number };
type TokensModule = {
  triggerAt: (text: string, caret: number) => Trigger | undefined;
  applyCompletion: (text: string, trigger: Trigger, replacement: string) => { text: string; caret: number };
  parseCommand: (text: string, names: ReadonlySet<string>) => { name: string; argument: string } | undefined;
  stepHistory: (
    prompts: readonly string[],
    index: number,
    direction: 'back' | 'forward',
    draft: string,
  ) => { index: number; text: string } | undefined;
};
const modulePath = '../../renderer/src/screens/session/composer/composerTokens.js';
const { triggerAt, applyCompletion, parseCommand, stepHistory } = (await import(
  /* @vite-ignore */ modulePath
)) as TokensModule;

describe('the composer’s / and @ words (issue 37)', () => {
  it('finds a command only as the prompt’s first word, and a mention after a space or a line start', () => {
    expect(triggerAt('/comp', 5)).toEqual({ kind: 'command', query: 'comp', start: 0, end: 5 });
    expect(triggerAt('/', 1)).toEqual({ kind: 'command', query: '', start: 0, end: 1 });
    expect(triggerAt('please /comp', 12)).toBeUndefined();
    expect(triggerAt('/compact now', 12)).toBeUndefined();
    expect(triggerAt('look at @src/ap', 15)).toEqual({ kind: 'mention', query: 'src/ap', start: 8, end: 15 });
    expect(triggerAt('first line\n@READ', 16)).toEqual({
      kind: 'mention',
      query: 'READ',
      start: 11,
      end: 16,
    });
    // An e-mail address is not a mention; the caret must be at the word's end.
    expect(triggerAt('mail me@example.com', 19)).toBeUndefined();
    expect(triggerAt('see @src and more', 17)).toBeUndefined();
  });

  it('replaces the word with the choice and a space, keeping a folder open to go on into it', () => {
    const mention = triggerAt('fix @ap please', 7) as Trigger;
    expect(applyCompletion('fix @ap please', mention, '@src/app.ts')).toEqual({
      text: 'fix @src/app.ts please',
      caret: 15,
    });
    const folder = triggerAt('in @sr', 6) as Trigger;
    expect(applyCompletion('in @sr', folder, '@src/')).toEqual({ text: 'in @src/', caret: 8 });
    const command = triggerAt('/ren', 4) as Trigger;
    expect(applyCompletion('/ren', command, '/rename')).toEqual({ text: '/rename ', caret: 8 });
  });

  it('reads a typed command and its argument, only for names it knows', () => {
    const names = new Set(['rename', 'compact']);
    expect(parseCommand('/rename  The new title ', names)).toEqual({
      name: 'rename',
      argument: 'The new title',
    });
    expect(parseCommand('/COMPACT', names)).toEqual({ name: 'compact', argument: '' });
    expect(parseCommand('/etc/hosts is odd', names)).toBeUndefined();
    expect(parseCommand('please /compact', names)).toBeUndefined();
  });

  it('walks the prompt history back and forward, returning to the draft', () => {
    const prompts = ['one', 'two', 'three'];
    expect(stepHistory(prompts, -1, 'back', 'draft')).toEqual({ index: 0, text: 'three' });
    expect(stepHistory(prompts, 0, 'back', 'draft')).toEqual({ index: 1, text: 'two' });
    expect(stepHistory(prompts, 2, 'back', 'draft')).toBeUndefined();
    expect(stepHistory(prompts, 1, 'forward', 'draft')).toEqual({ index: 0, text: 'three' });
    expect(stepHistory(prompts, 0, 'forward', 'draft')).toEqual({ index: -1, text: 'draft' });
    expect(stepHistory(prompts, -1, 'forward', 'draft')).toBeUndefined();
    expect(stepHistory([], -1, 'back', '')).toBeUndefined();
  });
});
