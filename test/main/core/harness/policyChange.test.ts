import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Policy, ToolMode } from '../../../../main/common/events.js';
import { changePolicy, HarnessError, SessionLog } from '../../../../main/core/harness/index.js';
import { ensureCliBuilt, runKeel } from '../../../support/cli.js';

/* Issue #37: the one policy change every host records (keel policy, the app's header, ACP's mode). */

let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-policy-change-'));
  await ensureCliBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function newSession(policy: Policy, toolMode: ToolMode): SessionLog {
  return SessionLog.create(path.join(dir, 'home'), {
    projectFolder: dir,
    provider: 'openai-compatible',
    model: 'scripted-model',
    baseUrl: 'http://127.0.0.1:9/v1',
    contextWindow: 32_000,
    toolMode,
    policy,
  });
}

describe('changePolicy', () => {
  it('records policy_changed with the policy before; the same policy records nothing', () => {
    const log = newSession('ask', 'write');
    try {
      expect(changePolicy(log, 'auto-edit')).toMatchObject({ policy: 'auto-edit', previous: 'ask' });
      expect(log.read().at(-1)).toMatchObject({ kind: 'policy_changed', policy: 'auto-edit' });
      const seq = log.lastSeq();
      expect(changePolicy(log, 'auto-edit')).toEqual({
        policy: 'auto-edit',
        previous: 'auto-edit',
        events: [],
      });
      expect(log.lastSeq()).toBe(seq);
    } finally {
      log.close();
    }
  });

  it('refuses an unknown policy and a writing policy for a session created read-only, in words', () => {
    const log = newSession('read-only', 'read-only');
    try {
      expect(() => changePolicy(log, 'yolo')).toThrow(/unknown policy "yolo": use read-only, ask/);
      expect(() => changePolicy(log, 'full-auto')).toThrow(HarnessError);
      expect(() => changePolicy(log, 'full-auto')).toThrow(/created read-only/);
      expect(log.read().map((event) => event.kind)).toEqual(['session_created']);
    } finally {
      log.close();
    }
  });

  it('is what `keel policy` records and refuses', () => {
    const log = newSession('ask', 'write');
    const id = log.id;
    log.close();
    const home = path.join(dir, 'home');
    const changed = runKeel(home, ['policy', id, 'full-auto']);
    expect(changed.stderr).toContain(`${id} policy is now full-auto (was ask)`);
    expect(changed.code).toBe(0);
    const refused = runKeel(home, ['policy', id, 'sometimes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unknown policy "sometimes"');
    const again = SessionLog.open(home, id, { write: false });
    try {
      expect(again.read().filter((event) => event.kind === 'policy_changed')).toMatchObject([
        { policy: 'full-auto' },
      ]);
    } finally {
      again.close();
    }
  });
});
