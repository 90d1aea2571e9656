import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePlan } from '../../main/tools/applyPatch.js';
import { executeToolCall } from '../../main/tools/execute.js';
import { planPatch } from '../../main/tools/patchPlan.js';
import { createToolRegistry } from '../../main/tools/registry.js';
import type { ToolOutcome } from '../../main/tools/types.js';
import { errorOf, makeSessionBox, type TempSessionBox } from '../main/tools/helpers.js';

// apply_patch names many paths in one call, in headers the model writes freely: every one of them (Add,
// Update, Delete, Move to) must be confined exactly like write_file's path, and one escaping path anywhere
// in the patch must stop the whole patch before any file is written, inside or outside.

let t: TempSessionBox;
const registry = createToolRegistry('write');
const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
const run = (input: string): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name: 'apply_patch', arguments: JSON.stringify({ input }) }, t.ctx());
const outsideState = (): Record<string, string> =>
  Object.fromEntries(
    readdirSync(t.outside).map((name) => [name, readFileSync(path.join(t.outside, name), 'utf8')]),
  );

beforeEach(() => {
  t = makeSessionBox();
  t.put('persistent/project/src/app.js', 'let a = 1;\n');
  writeFileSync(path.join(t.outside, 'secret.txt'), 'outside\n');
  // Links inside the project that lead out of it: to a folder and to a file.
  symlinkSync(t.outside, path.join(t.project, 'out'));
  symlinkSync(path.join(t.outside, 'secret.txt'), path.join(t.project, 'secret-link.txt'));
});
afterEach(() => t.cleanup());

describe('attack: apply_patch paths that leave the root', () => {
  const escapes: [string, string][] = [
    ['Add File with ../', '*** Add File: ../../../outside/new.txt'],
    ['Add File through a link out', '*** Add File: out/new.txt'],
    ['Add File at an absolute path outside', '*** Add File: /etc/keel-apply-patch-test'],
    ['Add File under /session/..', '*** Add File: /session/../../outside/new.txt'],
    ['Delete File through a link to an outside file', '*** Delete File: secret-link.txt'],
    ['Delete File with ../', '*** Delete File: ../../../outside/secret.txt'],
  ];

  for (const [name, header] of escapes) {
    it(`${name}: refused, and the safe sections before it are not written either`, async () => {
      const before = outsideState();
      const outcome = await run(
        patch('*** Add File: first.txt', '+first', header, ...(header.includes('Add') ? ['+x'] : [])),
      );
      expect(outcome.isError).toBe(true);
      expect(errorOf(outcome.content)).toMatch(/^Argument "(Add|Delete) File" .*path escapes the workspace/);
      expect(existsSync(path.join(t.project, 'first.txt'))).toBe(false);
      expect(outsideState()).toEqual(before);
      expect(existsSync('/etc/keel-apply-patch-test')).toBe(false);
    });
  }

  it('Update File through a link out, and Move to outside: refused, the source untouched', async () => {
    const before = outsideState();
    const update = await run(patch('*** Update File: secret-link.txt', '@@', '-outside', '+owned'));
    expect(update.isError).toBe(true);
    const move = await run(
      patch(
        '*** Update File: src/app.js',
        '*** Move to: ../../../outside/app.js',
        '@@',
        '-let a = 1;',
        '+let a = 2;',
      ),
    );
    expect(move.isError).toBe(true);
    expect(errorOf(move.content)).toMatch(/Move to/);
    const linked = await run(
      patch('*** Update File: src/app.js', '*** Move to: out/app.js', '@@', '-let a = 1;', '+let a = 2;'),
    );
    expect(linked.isError).toBe(true);
    expect(readFileSync(path.join(t.project, 'src/app.js'), 'utf8')).toBe('let a = 1;\n');
    expect(outsideState()).toEqual(before);
  });

  it('a folder swapped for a link after planning: the pinned write refuses it, and the earlier files are restored', async () => {
    mkdirSync(path.join(t.project, 'lib'));
    writeFileSync(path.join(t.project, 'lib', 'x.js'), 'x\n');
    const plan = await planPatch(
      patch(
        '*** Update File: src/app.js',
        '@@',
        '-let a = 1;',
        '+let a = 2;',
        '*** Update File: lib/x.js',
        '@@',
        '-x',
        '+y',
      ),
      t.ctx(),
    );
    const error = await writePlan(plan, t.ctx(), (file) => {
      if (file.path !== 'lib/x.js') return;
      // The attacker replaces lib/ with a link to the outside folder holding its own x.js.
      writeFileSync(path.join(t.outside, 'x.js'), 'x\n');
      rmSync(path.join(t.project, 'lib'), { recursive: true });
      symlinkSync(t.outside, path.join(t.project, 'lib'));
    }).catch((e: unknown) => e);
    expect(String(error)).toMatch(/lib\/x\.js: .*restored/);
    expect(readFileSync(path.join(t.outside, 'x.js'), 'utf8')).toBe('x\n');
    expect(readFileSync(path.join(t.project, 'src/app.js'), 'utf8')).toBe('let a = 1;\n');
  });
});
