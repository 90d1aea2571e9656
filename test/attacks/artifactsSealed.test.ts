import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox, type SandboxInfo } from '../../main/sandbox/box.js';
import { executeToolCall } from '../../main/tools/execute.js';
import { createToolRegistry } from '../../main/tools/registry.js';
import { makeWorkspace, type TempWorkspace } from '../main/tools/helpers.js';

// Attack: forge the record of what a command printed. /artifacts is an area the file tools read (a cut
// result names it) and none may write; a command must not write it either, although, like a direct
// session's /session, it lies outside the box's folder. It used to be bound into the box writable with the
// other areas outside it, so `echo forged > <artifacts>/x.log` changed the session's record on the host.

let sandbox: SandboxInfo;
let t: TempWorkspace;
beforeAll(async () => {
  sandbox = await detectSandbox();
});
beforeEach(() => {
  t = makeWorkspace(sandbox);
});
afterEach(() => t.cleanup());

describe('attacks: the artifacts a session keeps', () => {
  it('a boxed command cannot write /artifacts, even at its real path', async () => {
    if (sandbox.kind === 'none') return; // without a box every command asks first; nothing to attack here
    const artifacts = path.join(t.sessionDir, 'artifacts');
    const record = path.join(artifacts, 'ev3-run_command.log');
    writeFileSync(record, 'not ok 2 - sum\n');
    const ctx = t.ctx({ areas: [{ prefix: '/artifacts', root: artifacts, sealed: true }] });
    const outcome = await executeToolCall(
      createToolRegistry('write'),
      {
        id: 'c1',
        name: 'run_command',
        arguments: JSON.stringify({
          command: `echo forged > '${record}'; echo forged > '${artifacts}/new.log'`,
        }),
      },
      ctx,
    );
    expect(outcome.content).not.toContain('invalid arguments');
    expect(readFileSync(record, 'utf8')).toBe('not ok 2 - sum\n');
    expect(() => readFileSync(path.join(artifacts, 'new.log'))).toThrow();
  });
});
