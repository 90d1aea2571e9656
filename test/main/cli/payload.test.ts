import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Payload } from '../../../main/core/projection/index.js';
import { validatePayload } from '../../../main/core/projection/index.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../../main/core/prompts/system.js';
import { ensureCliBuilt, makeTempDir, removeTempDir, runKeel } from '../../support/cli.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/harness-article-session.jsonl');
const ID = '01JNARTICLE0000000000000001';
const SUMMARY_START = 'Session so far: Goal: add rate limiting to the API.';

let home: string;
beforeAll(async () => {
  await ensureCliBuilt();
  home = makeTempDir();
  expect(runKeel(home, ['import', FIXTURE, '--keep-id']).code).toBe(0);
}, 180_000);
afterAll(() => removeTempDir(home));

function payloadOf(args: readonly string[]): Payload {
  const result = runKeel(home, ['payload', ID, '--json', ...args]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Payload;
}

describe('keel payload', () => {
  it('sends the compaction summary and the pinned goal instead of the replaced events', () => {
    const payload = payloadOf([]);
    expect(validatePayload(payload)).toEqual({ ok: true });
    const [system, summary, goal, ...rest] = payload.messages;
    expect(system).toEqual({ role: 'system', content: DEFAULT_SYSTEM_PROMPT });
    expect(summary?.role).toBe('system');
    expect(summary?.content.startsWith(SUMMARY_START)).toBe(true);
    expect(goal).toEqual({ role: 'user', content: 'add rate limiting to the api' });
    const text = JSON.stringify(rest);
    expect(text).not.toContain('Let me find where the HTTP handlers are registered.');
    expect(text).not.toContain('42 hits');
    expect(text).toContain('The limiter is in place for /api/.');
  });

  it('restores the replaced messages with --without-compaction', () => {
    const payload = payloadOf(['--without-compaction', '9']);
    expect(validatePayload(payload)).toEqual({ ok: true });
    const text = JSON.stringify(payload.messages);
    expect(text).not.toContain('Session so far:');
    expect(payload.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(payload.messages[2]?.toolCalls?.[0]?.name).toBe('grep');
    expect(payload.messages[3]?.content).toContain('42 hits');
  });

  it('uses --system as the system prompt', () => {
    expect(payloadOf(['--system', 'Be brief.']).messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    });
  });

  it('prints the payload readably by default', () => {
    const result = runKeel(home, ['payload', ID]);
    expect(result.code).toBe(0);
    // One block per message; the system prompt has blank lines of its own.
    const blocks = result.stdout.split(/\n\n(?=--- )/);
    expect(blocks[0]).toBe(`--- system ---\n${DEFAULT_SYSTEM_PROMPT}`);
    expect(blocks[1]?.startsWith(`--- system ---\n${SUMMARY_START}`)).toBe(true);
    expect(blocks[2]).toBe('--- user ---\nadd rate limiting to the api');
  });

  it('refuses a seq that is not a compaction, in one line', () => {
    expect(runKeel(home, ['payload', ID, '--without-compaction', '4'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `keel: event 4 of session ${ID} is tool_result, not a compaction; see keel show ${ID}\n`,
    });
    expect(runKeel(home, ['payload', ID, '--without-compaction', '99'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `keel: session ${ID} has no event 99 (it has 10); see keel show ${ID}\n`,
    });
  });
});
