import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSymlinkConfined } from '../../../main/sandbox/paths.js';
import type { Pinning } from '../../../main/sandbox/paths.js';
import { OUTSIDE_SECRET, createFixture } from './pathsFixture.js';
import type { Fixture } from './pathsFixture.js';

let f: Fixture;

beforeEach(() => {
  f = createFixture();
});

afterEach(() => {
  f.cleanup();
});

describe.each<Pinning>(['procfd', 'portable'])('confined symbolic links [%s]', (pinning) => {
  it('makes a link with its text as given, creating its folders, and leaves no temp name', () => {
    const made = writeSymlinkConfined(f.ws, 'deep/er/link', '../../target.txt', { argName: 'path', pinning });
    expect(made).toBe(path.join(f.ws, 'deep', 'er', 'link'));
    expect(fs.readlinkSync(made)).toBe('../../target.txt');
    expect(fs.readdirSync(path.join(f.ws, 'deep', 'er'))).toEqual(['link']);
  });

  it('replaces the link at the name, never the file it points to', () => {
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'kept');
    fs.symlinkSync('a.txt', path.join(f.ws, 'link'));
    fs.symlinkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'leak'));
    writeSymlinkConfined(f.ws, 'link', 'b.txt', { argName: 'path', pinning });
    writeSymlinkConfined(f.ws, 'leak', 'b.txt', { argName: 'path', pinning });
    expect(fs.readlinkSync(path.join(f.ws, 'link'))).toBe('b.txt');
    expect(fs.readlinkSync(path.join(f.ws, 'leak'))).toBe('b.txt');
    expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('kept');
    expect(fs.readFileSync(path.join(f.outside, 'secret.txt'), 'utf8')).toBe(OUTSIDE_SECRET);
  });

  it('refuses a folder at the name and a protected path without an approval', () => {
    fs.mkdirSync(path.join(f.ws, 'folder'));
    expect(() => writeSymlinkConfined(f.ws, 'folder', 'x', { argName: 'path', pinning })).toThrow(
      expect.objectContaining({ code: 'is_directory' }),
    );
    expect(() =>
      writeSymlinkConfined(f.ws, '.git/hooks/pre-commit', 'x', { argName: 'path', pinning }),
    ).toThrow(expect.objectContaining({ code: 'protected' }));
    expect(fs.existsSync(path.join(f.ws, '.git'))).toBe(false);
    writeSymlinkConfined(f.ws, '.vscode/tasks.json', 'x', { argName: 'path', pinning, allowProtected: true });
    expect(fs.readlinkSync(path.join(f.ws, '.vscode', 'tasks.json'))).toBe('x');
  });
});
