import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';

// Issue #30 in the session view: a command's row, the skills and agents offered, each skill the model loaded.
type Item = { type: string; key: string; text?: string; [field: string]: unknown };
const modulePath = '../../renderer/src/screens/session/transcriptItems.js';
const { foldTranscript } = (await import(/* @vite-ignore */ modulePath)) as {
  foldTranscript: (events: readonly SessionEvent[]) => Item[];
};

let seq = 0;
const at = '2025-03-01T10:00:00.000Z';
const event = (fields: Record<string, unknown>) => ({ ...fields, seq: ++seq, at }) as SessionEvent;
const origin = { scope: 'project', layout: 'claude', sha256: 'h' };

describe('the transcript of a session using a command, skills and a custom agent', () => {
  it('shows the command, the listing and the loaded skills as notes beside their rows', () => {
    seq = 0;
    const items = foldTranscript([
      event({
        kind: 'user_message',
        content: 'Review the code under src/.',
        command: { ...origin, shown: '.claude/commands/review.md', name: 'review', arguments: 'src/' },
      }),
      event({
        kind: 'custom_listed',
        skills: [{ ...origin, shown: '.agents/skills/release/SKILL.md', name: 'release', description: 'd' }],
        agents: [{ ...origin, shown: '.claude/agents/t.md', name: 'test-runner', description: 'd' }],
        problems: [{ path: '.claude/commands/bad.md', line: 3, message: 'invalid YAML front matter' }],
      }),
      event({
        kind: 'assistant_message',
        content: '',
        toolCalls: [
          { id: 'k1', name: 'load_skill', arguments: '{"name":"release"}' },
          { id: 'k2', name: 'load_skill', arguments: '{"name":"nope"}' },
        ],
      }),
      event({ kind: 'tool_result', toolCallId: 'k1', tool: 'load_skill', content: 'Skill "release" …' }),
      event({
        kind: 'tool_result',
        toolCallId: 'k2',
        tool: 'load_skill',
        content: '{"error":"x"}',
        isError: true,
      }),
    ]);
    const notes = items.filter((item) => item.type === 'note').map((item) => item.text);
    expect(notes).toEqual([
      'Command /review src/ (.claude/commands/review.md)',
      'Skills offered: release · custom agents: test-runner · ignored: .claude/commands/bad.md:3 invalid YAML front matter',
      'Skill loaded: release',
    ]);
    // The command's note comes right before the message it produced.
    const index = items.findIndex((item) => item.type === 'user');
    expect(items[index - 1]?.text).toBe('Command /review src/ (.claude/commands/review.md)');
  });

  it("shows a hook's continue:false as the turn's stop with its stopReason; other runs add no row", () => {
    seq = 0;
    const ran = (fields: Record<string, unknown>) =>
      event({
        kind: 'hook_ran',
        source: '~/.claude/settings.json',
        sha256: 'h',
        command: 'c',
        event: 'PreToolUse',
        subject: 'call:1',
        inputDigest: 'd',
        decision: 'none',
        output: '',
        bytes: 0,
        exitCode: 0,
        durationMs: 1,
        ...fields,
      });
    const items = foldTranscript([ran({}), ran({ stop: true, stopReason: 'frozen for the release' })]);
    expect(items.filter((item) => item.type === 'stop')).toEqual([
      expect.objectContaining({
        stop: {
          kind: 'hook',
          message: 'A PreToolUse hook (~/.claude/settings.json) ended the turn: frozen for the release',
        },
      }),
    ]);
  });
});
