import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, Policy } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { compactNow } from '../../../../main/core/harness/compaction.js';
import { applyPlanMode } from '../../../../main/core/harness/plan.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import type { TurnHostOptions } from '../../../../main/core/harness/turnHost.js';
import { createProvider } from '../../../../main/providers/index.js';
import { useUserHome, writeUnder } from '../../../support/setupFiles.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

// Issue #30: what a hook's JSON controls beyond allow/deny (continue: false with stopReason, suppressOutput,
// Stop / SubagentStop blocks), the SessionStart sources and PreCompact's manual trigger, the transcript a hook
// reads, and hook scripts kept in the user's home: real settings files, real scripts in the real box.

const fixture = useTurnHostFixture('keel-hooks-control-');
const home = useUserHome(fixture);

type Group = { matcher?: string; hooks: { type: 'command'; command: string }[] };
const settings = (hooks: Record<string, Group[]>) => JSON.stringify({ hooks }, null, 2);
const one = (command: string, matcher?: string): Group[] => [
  { ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command', command }] },
];
const userHooks = (hooks: Record<string, Group[]>) =>
  writeUnder(home.path, '.claude/settings.json', settings(hooks));
/** A command printing this JSON (the hook's whole stdout). */
const prints = (json: unknown) => `printf '%s' '${JSON.stringify(json)}'`;

const env = () => ({ PATH: process.env.PATH, KEEL_USER_HOME: home.path });
async function turn(log: SessionLog, prompt?: string, options: TurnHostOptions = {}) {
  const host = await fixture.keelHost(log, { env: env(), ...options });
  return runTurn(host, prompt === undefined ? {} : { prompt });
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: args });
const calls = (...toolCalls: ReturnType<typeof call>[]) => ({ kind: 'reply' as const, text: '', toolCalls });
const write = (id: string, file: string) => call(id, 'write_file', { path: file, content: 'x\n' });
const resultOf = (log: SessionLog, id: string) =>
  log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id);
const hookRuns = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'hook_ran'> => e.kind === 'hook_ran');
const session = (policy: Policy = 'full-auto') => fixture.createSession({ policy, toolMode: 'write' });
const sent = () => JSON.stringify(fixture.server.requests.at(-1)?.body ?? {});
const exists = (file: string) => fs.existsSync(path.join(fixture.project, file));

describe.runIf(process.platform === 'linux')(
  'hook control, sources, transcript, home scripts (bwrap)',
  () => {
    beforeEach((context) => {
      if (fixture.sandbox.kind !== 'bwrap') context.skip();
    });

    it('PreToolUse continue:false ends the turn over its allow: no call of the message runs; stopReason is the user’s', async () => {
      userHooks({
        PreToolUse: one(
          prints({
            continue: false,
            stopReason: 'frozen for the release',
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
          }),
          'Write',
        ),
      });
      const log = session();
      fixture.server.enqueue(calls(write('w1', 'a.txt'), write('w2', 'b.txt')), {
        kind: 'reply',
        text: 'next',
      });
      const outcome = await turn(log, 'write two');
      expect(outcome).toMatchObject({ status: 'completed', stop: { kind: 'hook' } });
      expect(JSON.stringify(outcome)).toContain('frozen for the release');
      expect(exists('a.txt') || exists('b.txt')).toBe(false);
      expect(resultOf(log, 'w1')?.content).toContain('a hook ended the turn');
      expect(resultOf(log, 'w2')?.content).toContain('a hook ended the turn');
      expect(log.read().some((e) => e.kind === 'tool_call_started')).toBe(false);
      expect(hookRuns(log)).toHaveLength(1);
      expect(hookRuns(log)[0]).toMatchObject({ stop: true, stopReason: 'frozen for the release' });
      // The next prompt goes on; the model never reads the stopReason.
      fs.rmSync(path.join(home.path, '.claude'), { recursive: true });
      expect(await turn(log, 'go on')).toEqual({ status: 'completed', text: 'next' });
      expect(sent()).not.toContain('frozen for the release');
    });

    it('PostToolUse continue:false: the call ran and is answered, the rest of the message does not run', async () => {
      userHooks({
        PostToolUse: one(prints({ continue: false, stopReason: 'one write is enough' }), 'Write'),
      });
      const log = session();
      fixture.server.enqueue(calls(write('p1', 'a.txt'), write('p2', 'b.txt')));
      const outcome = await turn(log, 'write two');
      expect(outcome).toMatchObject({ status: 'completed', stop: { kind: 'hook' } });
      expect(exists('a.txt')).toBe(true);
      expect(exists('b.txt')).toBe(false);
      expect(resultOf(log, 'p1')?.isError).toBeUndefined();
      expect(resultOf(log, 'p2')?.content).toContain('a hook ended the turn');
    });

    it('Stop: continue:false wins over a block; suppressOutput keeps stdout out of the record', async () => {
      userHooks({
        Stop: one(
          `echo noise >&2; ${prints({ decision: 'block', reason: 'keep going', continue: false, stopReason: 'enough for today', suppressOutput: true })}`,
        ),
      });
      const log = session('ask');
      fixture.server.enqueue({ kind: 'reply', text: 'done' });
      const outcome = await turn(log, 'work');
      expect(outcome).toMatchObject({ status: 'completed', text: 'done', stop: { kind: 'hook' } });
      expect(fixture.server.requests).toHaveLength(1);
      const [ran] = hookRuns(log);
      expect(ran).toMatchObject({ event: 'Stop', decision: 'none', stop: true, suppressed: true });
      expect(ran?.output).toBe('noise\n');
    });

    it('SubagentStop hooks (the parent’s) run in the child: a block sends the child back once', async () => {
      userHooks({
        SubagentStop: one(
          `jq -e .stop_hook_active >/dev/null && exit 0; ${prints({ decision: 'block', reason: 'count again' })}`,
        ),
        // The parent's own Stop hooks are not the child's.
        Stop: one('exit 0'),
      });
      const log = session('ask');
      fixture.server.enqueue(
        calls(call('s1', 'spawn_subagent', { task: 'count the files' })),
        { kind: 'reply', text: 'three' },
        { kind: 'reply', text: 'three, counted twice' },
        { kind: 'reply', text: 'the child says three' },
      );
      expect(await turn(log, 'delegate')).toEqual({ status: 'completed', text: 'the child says three' });
      expect(resultOf(log, 's1')).toBeUndefined();
      const answer = log
        .read()
        .find((e): e is EventOf<'subagent_result'> => e.kind === 'subagent_result' && e.toolCallId === 's1');
      expect(answer?.content).toContain('counted twice');
      expect(JSON.stringify(fixture.server.requests[2]?.body)).toContain('count again');
      expect(hookRuns(log).map((run) => run.event)).toEqual(['Stop']);
    });

    it('SessionStart sources: startup once, resume on a new process’s first prompt, compact after a manual compaction (PreCompact manual first)', async () => {
      userHooks({
        SessionStart: one(`jq -r '"source " + .source'`),
        PreCompact: one(
          `jq -r '.trigger + ":" + .custom_instructions' >> "$CLAUDE_PROJECT_DIR/precompact"`,
          'manual',
        ),
      });
      const log = session('ask');
      fixture.server.enqueue(
        { kind: 'reply', text: 'one' },
        { kind: 'reply', text: 'two' },
        { kind: 'reply', text: 'three' },
        { kind: 'reply', text: 'summary of it all' },
        { kind: 'reply', text: 'four' },
      );
      await turn(log, 'first');
      expect(sent()).toContain('source startup');
      await turn(log, 'second');
      expect(sent()).not.toContain('source resume');
      await turn(log, 'third', { resumed: true });
      expect(sent()).toContain('source resume');
      const compacted = await compactNow(log, {
        settings: { keepRecent: 0.01 },
        provider: (pin) => createProvider(pin, {}, {}),
        hooks: { env: env(), instructions: 'keep the names' },
      });
      expect(compacted.status).toBe('compacted');
      expect(fs.readFileSync(path.join(fixture.project, 'precompact'), 'utf8')).toBe(
        'manual:keep the names\n',
      );
      await turn(log, 'fourth');
      expect(sent()).toContain('source compact');
      const sources = hookRuns(log)
        .filter((run) => run.event === 'SessionStart')
        .map((run) => run.subject.replace(/:\d+$/, ''));
      expect(sources).toEqual(['session', 'resume', 'compact']);
    });

    it('an automatic compaction inside a turn: PreCompact (auto) before it, SessionStart (compact) after it, in that turn’s next request', async () => {
      userHooks({
        PreCompact: one(
          `jq -r '.trigger + ":" + .custom_instructions' >> "$CLAUDE_PROJECT_DIR/precompact"`,
          'auto',
        ),
        SessionStart: one(`jq -r '"restored after " + .source'`, 'compact'),
      });
      const log = fixture.createSession({ policy: 'ask', toolMode: 'write', contextWindow: 16_000 });
      fixture.server.enqueue(
        { kind: 'reply', text: 'one' },
        // The provider counts the second request near half the window (the trigger trusts its count).
        { kind: 'reply', text: 'two', usage: { inputTokens: 7_900 } },
        { kind: 'reply', text: 'the summary of one and two' },
        { kind: 'reply', text: 'three' },
      );
      const compaction = { threshold: 0.5, keepRecent: 0.01 };
      await turn(log, `first ${'alpha '.repeat(50)}`, { compaction });
      await turn(log, `second ${'beta '.repeat(50)}`, { compaction });
      expect(exists('precompact')).toBe(false);
      // The third prompt takes the next request over half the window: compacted inside this turn.
      expect(await turn(log, `third ${'gamma '.repeat(300)}`, { compaction })).toEqual({
        status: 'completed',
        text: 'three',
      });
      expect(fs.readFileSync(path.join(fixture.project, 'precompact'), 'utf8')).toBe('auto:\n');
      const summaryRequest = JSON.stringify(fixture.server.requests[2]?.body);
      expect(summaryRequest).toContain('alpha');
      expect(summaryRequest).not.toContain('restored after');
      expect(sent()).toContain('the summary of one and two');
      expect(sent()).toContain('restored after compact');
      const kinds = log
        .read()
        .filter((e) => e.kind === 'hook_ran' || e.kind === 'compaction' || e.kind === 'assistant_message')
        .map((e) => (e.kind === 'hook_ran' ? `${e.event}:${e.subject.replace(/\d+/, 'N')}` : e.kind));
      expect(kinds.slice(-4)).toEqual([
        'PreCompact:compact:N',
        'compaction',
        'SessionStart:compact:N',
        'assistant_message',
      ]);
      const compacted = log.read().find((e): e is EventOf<'compaction'> => e.kind === 'compaction');
      expect(hookRuns(log).at(-1)?.subject).toBe(`compact:${compacted?.seq}`);
    });

    it('a manual compaction is skipped when a PreCompact hook says continue:false', async () => {
      userHooks({ PreCompact: one(prints({ continue: false, stopReason: 'not now' }), 'manual') });
      const log = session('ask');
      fixture.server.enqueue({ kind: 'reply', text: 'one' }, { kind: 'reply', text: 'two' });
      await turn(log, 'first');
      await turn(log, 'second');
      const outcome = await compactNow(log, {
        settings: { keepRecent: 0.01 },
        provider: (pin) => createProvider(pin, {}, {}),
        hooks: { env: env() },
      });
      expect(outcome).toEqual({
        status: 'skipped',
        reason:
          'a PreCompact hook stopped the compaction: not now (PreCompact hook, ~/.claude/settings.json)',
      });
      expect(log.read().some((e) => e.kind === 'compaction')).toBe(false);
    });

    it('PreCompact (auto) continue:false: nothing is compacted and the turn ends before its request', async () => {
      userHooks({ PreCompact: one(prints({ continue: false, stopReason: 'keep my context' }), 'auto') });
      const log = fixture.createSession({ policy: 'ask', toolMode: 'write', contextWindow: 2_000 });
      const outcome = await turn(log, 'word '.repeat(3_000), { compaction: { threshold: 0.5 } });
      expect(outcome).toMatchObject({ status: 'completed', stop: { kind: 'hook' } });
      expect(JSON.stringify(outcome)).toContain('keep my context');
      expect(log.read().some((e) => e.kind === 'compaction')).toBe(false);
      expect(fixture.server.requests).toHaveLength(0);
    });

    it('permission_mode is Claude Code’s name for the session’s policy, plan in plan mode', async () => {
      userHooks({ UserPromptSubmit: one(`jq -r .permission_mode >> "$CLAUDE_PROJECT_DIR/modes"`) });
      const sessions: [Policy, boolean][] = [
        ['ask', false],
        ['auto-edit', false],
        ['full-auto', false],
        ['read-only', false],
        ['auto-edit', true],
      ];
      for (const [policy, plan] of sessions) {
        const log = fixture.createSession({
          policy,
          toolMode: policy === 'read-only' ? 'read-only' : 'write',
        });
        if (plan) applyPlanMode(log, true);
        fixture.server.enqueue({ kind: 'reply', text: 'ok' });
        await turn(log, 'which mode?');
      }
      expect(fs.readFileSync(path.join(fixture.project, 'modes'), 'utf8').split('\n')).toEqual([
        'default',
        'acceptEdits',
        'bypassPermissions',
        'dontAsk',
        'plan',
        '',
      ]);
    });

    it('transcript_path: a redacted JSONL of the conversation, read-only, outside the project, gone afterwards', async () => {
      writeUnder(fixture.project, '.env', 'DEPLOY_TOKEN=tok-9f8e7d6c5b4a3210\n');
      userHooks({
        UserPromptSubmit: one(
          `t=$(jq -r .transcript_path); cat "$t" > "$CLAUDE_PROJECT_DIR/seen.jsonl"; echo "$t" > "$CLAUDE_PROJECT_DIR/seen-path"; ` +
            `(echo tamper >> "$t") 2>/dev/null && echo writable > "$CLAUDE_PROJECT_DIR/tamper"; exit 0`,
        ),
      });
      const log = session('full-auto');
      fixture.server.enqueue(
        calls(write('t1', 'a.txt')),
        { kind: 'reply', text: 'wrote it' },
        { kind: 'reply', text: 'ok' },
      );
      await turn(log, 'the token is tok-9f8e7d6c5b4a3210, write a file');
      await turn(log, 'and now?');
      const lines = fs
        .readFileSync(path.join(fixture.project, 'seen.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; message: { content: unknown } });
      expect(lines.map((line) => line.type)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(lines[1]?.message.content).toEqual([
        { type: 'tool_use', id: 't1', name: 'write_file', input: { path: 'a.txt', content: 'x\n' } },
      ]);
      const text = JSON.stringify(lines);
      expect(text).not.toContain('tok-9f8e7d6c5b4a3210');
      expect(text).toContain('REDACTED');
      expect(exists('tamper')).toBe(false);
      const where = fs.readFileSync(path.join(fixture.project, 'seen-path'), 'utf8').trim();
      expect(where.startsWith(os.tmpdir())).toBe(true);
      expect(where.startsWith(fixture.home)).toBe(false);
      expect(fs.existsSync(where)).toBe(false);
    });

    it('a user hook runs its script from ~/.claude/hooks and a home file it names, read-only; nothing else of home', async () => {
      // The script reads a home file its command does not name: hidden, as the rest of the home.
      writeUnder(
        home.path,
        '.claude/hooks/mark.sh',
        'echo "from home hooks" > "$CLAUDE_PROJECT_DIR/marked"\ncat ~/private/notes.txt >> "$CLAUDE_PROJECT_DIR/marked" 2>/dev/null\n',
      );
      writeUnder(home.path, 'bin/second.sh', 'echo second >> "$CLAUDE_PROJECT_DIR/marked"\n');
      writeUnder(home.path, 'private/notes.txt', 'my secret notes\n');
      userHooks({
        UserPromptSubmit: one(
          `sh ~/.claude/hooks/mark.sh; sh "${home.path}/bin/second.sh"; ` +
            '(echo x >> ~/.claude/hooks/mark.sh) 2>/dev/null && echo writable >> "$CLAUDE_PROJECT_DIR/marked"; exit 0',
        ),
      });
      const log = session('ask');
      fixture.server.enqueue({ kind: 'reply', text: 'hi' });
      await turn(log, 'hello');
      expect(fs.readFileSync(path.join(fixture.project, 'marked'), 'utf8')).toBe('from home hooks\nsecond\n');
      expect(fs.readFileSync(path.join(home.path, '.claude/hooks/mark.sh'), 'utf8')).not.toContain('echo x');
    });

    it('a project hook does not get the user’s home scripts', async () => {
      writeUnder(home.path, '.claude/hooks/mark.sh', 'echo leaked > "$CLAUDE_PROJECT_DIR/marked"\n');
      writeUnder(
        fixture.project,
        '.claude/settings.json',
        settings({ UserPromptSubmit: one(`sh ${home.path}/.claude/hooks/mark.sh; exit 0`) }),
      );
      const { approveProjectSetup } = await import('../../../../main/core/setup/index.js');
      approveProjectSetup(fixture.home, fixture.project, 'test');
      const log = session('ask');
      fixture.server.enqueue({ kind: 'reply', text: 'hi' });
      await turn(log, 'hello');
      expect(hookRuns(log)).toHaveLength(1);
      expect(exists('marked')).toBe(false);
    });
  },
);
