import { describe, expect, it } from 'vitest';
import {
  hooksOf,
  matcherPicks,
  sessionEndBudgetMs,
  type HookDef,
} from '../../../../main/core/hooks/config.js';
import { readHookRun, type HookRun } from '../../../../main/core/hooks/output.js';
import { combine } from '../../../../main/core/hooks/run.js';
import type { HookRan } from '../../../../main/common/hookEvents.js';
import type { SetupFile } from '../../../../main/core/setup/index.js';

// Issue #30: the hooks formats' own rules, pure: matchers, exit codes and JSON output, combining runs.

const run = (over: Partial<HookRun>): HookRun => ({
  exitCode: 0,
  timedOut: false,
  stdout: '',
  stderr: '',
  timeoutMs: 60_000,
  ...over,
});

describe('matchers (Claude Code hooks reference)', () => {
  const bash = ['Bash', 'run_command'];
  it('absent, empty and * match all; names and | or comma lists match exactly', () => {
    for (const m of [undefined, '', '*']) expect(matcherPicks(m, bash)).toBe(true);
    expect(matcherPicks('Bash', bash)).toBe(true);
    expect(matcherPicks('Edit|Write', bash)).toBe(false);
    expect(matcherPicks('Edit, Bash', bash)).toBe(true);
    expect(matcherPicks('Bas', bash)).toBe(false);
    expect(matcherPicks('run_command', bash)).toBe(true);
  });
  it('anything else is an unanchored regex; a broken one matches nothing', () => {
    expect(matcherPicks('mcp__memory__.*', ['mcp__memory__create'])).toBe(true);
    expect(matcherPicks('^Notebook', ['Bash'])).toBe(false);
    expect(matcherPicks('mcp__memory', ['mcp__memory__create'])).toBe(false);
    expect(matcherPicks('(', ['('])).toBe(false);
  });
});

describe('reading a run', () => {
  it('exit 2 blocks with stderr where the event can block; elsewhere it is shown only', () => {
    expect(readHookRun('PreToolUse', run({ exitCode: 2, stderr: 'no\n' }))).toMatchObject({
      decision: 'deny',
      reason: 'no',
    });
    expect(readHookRun('Stop', run({ exitCode: 2, stderr: 'go on' }))).toMatchObject({
      decision: 'block',
      context: 'go on',
    });
    expect(readHookRun('Notification', run({ exitCode: 2, stderr: 'x' }))).toMatchObject({
      decision: 'none',
    });
  });
  it('another exit code, a timeout or a start failure is an error, never an allow', () => {
    expect(readHookRun('PreToolUse', run({ exitCode: 1, stderr: 'boom' }))).toMatchObject({
      decision: 'error',
      reason: 'the hook failed (exit code 1): boom',
    });
    expect(readHookRun('PreToolUse', run({ exitCode: null, timedOut: true, timeoutMs: 500 })).decision).toBe(
      'error',
    );
    expect(readHookRun('PreToolUse', run({ startError: 'no box' })).decision).toBe('error');
  });
  it("PreToolUse's JSON: permissionDecision, its reason, updatedInput; the older approve / block", () => {
    const out = (value: unknown) => run({ stdout: JSON.stringify(value) });
    expect(
      readHookRun(
        'PreToolUse',
        out({
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'ask',
            permissionDecisionReason: 'look',
            updatedInput: { command: 'ls' },
          },
        }),
      ),
    ).toEqual({ decision: 'ask', reason: 'look', updatedInput: { command: 'ls' } });
    expect(readHookRun('PreToolUse', out({ decision: 'block', reason: 'old' }))).toMatchObject({
      decision: 'deny',
      reason: 'old',
    });
    expect(readHookRun('PreToolUse', out({ decision: 'approve' })).decision).toBe('allow');
    expect(
      readHookRun('PreToolUse', out({ hookSpecificOutput: { permissionDecision: 'maybe' } })).decision,
    ).toBe('error');
  });
  it('plain stdout is context for UserPromptSubmit and SessionStart only; continue:false stops', () => {
    expect(readHookRun('UserPromptSubmit', run({ stdout: 'ctx\n' }))).toEqual({
      decision: 'none',
      context: 'ctx',
    });
    expect(readHookRun('PostToolUse', run({ stdout: 'ctx' }))).toEqual({ decision: 'none' });
    expect(
      readHookRun('PostToolUse', run({ stdout: JSON.stringify({ continue: false, stopReason: 'enough' }) })),
    ).toMatchObject({ stop: true, stopReason: 'enough' });
    expect(
      readHookRun(
        'PostToolUse',
        run({ stdout: JSON.stringify({ decision: 'block', reason: 'lint failed' }) }),
      ),
    ).toMatchObject({ decision: 'block', context: 'lint failed' });
  });
  it('continue:false wins over a Stop or SubagentStop block; suppressOutput is kept; SubagentStop can block', () => {
    const both = JSON.stringify({ decision: 'block', reason: 'go on', continue: false, stopReason: 'halt' });
    for (const event of ['Stop', 'SubagentStop'] as const)
      expect(readHookRun(event, run({ stdout: both }))).toEqual({
        decision: 'none',
        stop: true,
        stopReason: 'halt',
      });
    // Elsewhere the block is still read (the turn ends anyway, by the stop).
    expect(readHookRun('PostToolUse', run({ stdout: both }))).toMatchObject({
      decision: 'block',
      stop: true,
    });
    expect(readHookRun('SubagentStop', run({ exitCode: 2, stderr: 'more' }))).toMatchObject({
      decision: 'block',
      context: 'more',
    });
    expect(readHookRun('Notification', run({ stdout: '{"suppressOutput":true}' }))).toEqual({
      decision: 'none',
      suppressOutput: true,
    });
  });
});

describe('combining and reading files', () => {
  const ran = (decision: HookRan['decision'], extra: Partial<HookRan> = {}) =>
    ({ event: 'PreToolUse', source: 's', decision, ...extra }) as HookRan;
  it('deny wins, and drops any rewritten input; otherwise the last rewrite counts', () => {
    expect(combine([ran('allow', { updatedInput: { a: 1 } }), ran('deny', { reason: 'no' })])).toMatchObject({
      decision: 'deny',
      reason: 'no (PreToolUse hook, s)',
    });
    expect(combine([ran('deny')]).updatedInput).toBeUndefined();
    expect(combine([ran('error'), ran('allow', { updatedInput: { a: 2 } })])).toMatchObject({
      decision: 'allow',
      updatedInput: { a: 2 },
    });
  });
  it('hooksOf: command hooks of settings and hooks files, seconds to ms, unknown events and types left out', () => {
    const file = (kind: 'settings' | 'hooks', scope: 'user' | 'project', hooks: unknown): SetupFile =>
      ({
        kind,
        scope,
        path: `/${scope}/${kind === 'hooks' ? '.codex/hooks.json' : '.claude/settings.json'}`,
        relativePath: kind === 'hooks' ? '.codex/hooks.json' : '.claude/settings.json',
        hash: 'h',
        json: { hooks },
      }) as unknown as SetupFile;
    const defs = hooksOf({
      files: [
        file('settings', 'user', {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [
                { type: 'command', command: 'a', timeout: 2 },
                { type: 'prompt', prompt: 'x' },
              ],
            },
          ],
          SubagentStart: [{ hooks: [{ type: 'command', command: 'b' }] }],
        }),
        file('hooks', 'project', {
          Stop: [
            {
              hooks: [
                { type: 'command', command: 'c' },
                { type: 'command', command: 'c' },
              ],
            },
          ],
        }),
      ],
    });
    expect(defs).toEqual([
      {
        event: 'PreToolUse',
        matcher: 'Bash',
        command: 'a',
        timeoutMs: 2000,
        timeoutSet: true,
        source: '~/.claude/settings.json',
        sha256: 'h',
        scope: 'user',
        folder: '/user/.claude',
        root: '/user',
      },
      {
        event: 'Stop',
        command: 'c',
        timeoutMs: 60_000,
        source: '.codex/hooks.json',
        sha256: 'h',
        scope: 'project',
        folder: '/project/.codex',
        root: '/project',
      },
    ]);
  });
});

describe('SessionEnd output', () => {
  it('blocks, stops and tells the model nothing; systemMessage and suppressOutput still count', () => {
    const json = JSON.stringify({
      continue: false,
      stopReason: 'x',
      decision: 'block',
      reason: 'y',
      systemMessage: 'flushed',
      suppressOutput: true,
      hookSpecificOutput: { hookEventName: 'SessionEnd', additionalContext: 'z' },
    });
    expect(readHookRun('SessionEnd', run({ stdout: json }))).toEqual({
      decision: 'none',
      systemMessage: 'flushed',
      suppressOutput: true,
    });
    expect(readHookRun('SessionEnd', run({ exitCode: 2, stderr: 'no' }))).toEqual({
      decision: 'none',
      reason: 'no',
    });
    expect(readHookRun('SessionEnd', run({ stdout: 'plain words' }))).toEqual({ decision: 'none' });
  });
});

describe('the SessionEnd budget (Claude Code hooks reference)', () => {
  const hook = (timeoutMs: number, timeoutSet?: true): HookDef => ({
    event: 'SessionEnd',
    command: 'true',
    timeoutMs,
    ...(timeoutSet ? { timeoutSet } : {}),
    source: '~/.claude/settings.json',
    sha256: 'x',
    scope: 'user',
    folder: '/home/u/.claude',
    root: '/home/u',
  });
  it('is 1.5 s, raised to the longest timeout a hook sets, at most 60 s', () => {
    expect(sessionEndBudgetMs([hook(60_000)], {})).toBe(1_500);
    expect(sessionEndBudgetMs([hook(60_000), hook(5_000, true), hook(1_000, true)], {})).toBe(5_000);
    expect(sessionEndBudgetMs([hook(500, true)], {})).toBe(1_500);
    expect(sessionEndBudgetMs([hook(600_000, true)], {})).toBe(60_000);
  });
  it('CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS replaces it (a positive whole number, within 60 s)', () => {
    const env = (value: string) => ({ CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS: value });
    expect(sessionEndBudgetMs([hook(5_000, true)], env('300'))).toBe(300);
    expect(sessionEndBudgetMs([hook(60_000)], env('120000'))).toBe(60_000);
    for (const bad of ['0', '-5', '1.5', 'soon', ''])
      expect(sessionEndBudgetMs([hook(60_000)], env(bad))).toBe(1_500);
  });
});
