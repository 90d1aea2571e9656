import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfinedFileError, PathEscapeError, removeFileConfined } from '../../../main/sandbox/paths.js';
import type { Pinning } from '../../../main/sandbox/paths.js';
import { createFixture } from './pathsFixture.js';
import type { Fixture } from './pathsFixture.js';

// removeFileConfined: apply_patch's Delete File and Move to remove files through it, so it must never remove
// anything outside the workspace, nor a folder or a special file, nor a protected path without approval.

let f: Fixture;

beforeEach(() => {
  f = createFixture();
  fs.mkdirSync(path.join(f.ws, 'src'));
  fs.writeFileSync(path.join(f.ws, 'src', 'a.txt'), 'a\n');
});
afterEach(() => f.cleanup());

const codeOf = (fn: () => void): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfinedFileError || error instanceof PathEscapeError) return error.code;
    throw error;
  }
  return 'none';
};

describe.each<Pinning>(['procfd', 'portable'])('removeFileConfined (%s)', (pinning) => {
  const remove = (arg: string, extra: Partial<Parameters<typeof removeFileConfined>[2]> = {}) =>
    removeFileConfined(f.ws, arg, { argName: 'path', pinning, ...extra });

  it('removes a regular file inside, pinned to the real path that was checked', () => {
    const real = path.join(f.ws, 'src', 'a.txt');
    expect(codeOf(() => remove('src/a.txt', { expectedRealPath: path.join(f.ws, 'other') }))).toBe('changed');
    expect(fs.existsSync(real)).toBe(true);
    remove('src/a.txt', { expectedRealPath: real });
    expect(fs.existsSync(real)).toBe(false);
    expect(codeOf(() => remove('src/a.txt'))).toBe('not_found');
  });

  it('refuses what is outside, a folder, a FIFO and a protected path; nothing outside changes', () => {
    const before = f.snapshotOutside();
    fs.symlinkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'link.txt'));
    fs.symlinkSync(f.outside, path.join(f.ws, 'out'));
    expect(codeOf(() => remove('../outside/secret.txt'))).toBe('escape');
    expect(codeOf(() => remove('link.txt'))).toBe('escape');
    expect(codeOf(() => remove('out/secret.txt'))).toBe('escape');
    expect(codeOf(() => remove(path.join(f.evil, 'file.txt')))).toBe('escape');
    expect(codeOf(() => remove('src'))).toBe('is_directory');
    execFileSync('mkfifo', [path.join(f.ws, 'pipe')]);
    expect(codeOf(() => remove('pipe'))).toBe('not_regular');
    expect(fs.existsSync(path.join(f.ws, 'pipe'))).toBe(true);
    fs.mkdirSync(path.join(f.ws, '.git'));
    fs.writeFileSync(path.join(f.ws, '.git', 'config'), 'x');
    expect(codeOf(() => remove('.git/config'))).toBe('protected');
    expect(fs.existsSync(path.join(f.ws, '.git', 'config'))).toBe(true);
    remove('.git/config', { allowProtected: true });
    expect(fs.existsSync(path.join(f.ws, '.git', 'config'))).toBe(false);
    expect(f.snapshotOutside()).toEqual(before);
  });
});
