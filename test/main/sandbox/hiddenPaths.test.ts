import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PathEscapeError,
  hiddenFoldersUnder,
  readFileConfined,
  removeFileConfined,
  resolveInWorkspace,
  writeFileConfined,
} from '../../../main/sandbox/paths.js';
import type { Pinning } from '../../../main/sandbox/paths.js';

// `hidden` (the Keel home inside a project): refused like an escape inside the root, unless it holds the root;
// and refusals that name a folder met on the way name it relative to the root, never by its host path.

let dir: string;
let ws: string;
let keelHome: string;

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-hidden-')));
  ws = path.join(dir, 'ws');
  keelHome = path.join(ws, '.config', 'Keel');
  fs.mkdirSync(path.join(keelHome, 'sessions', 's1'), { recursive: true });
  fs.writeFileSync(path.join(keelHome, 'settings.json'), '{}\n');
  fs.writeFileSync(path.join(ws, 'README.md'), 'readme\n');
  fs.symlinkSync(keelHome, path.join(ws, 'link'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const hidden = () => [keelHome];

describe('resolveInWorkspace with hidden folders', () => {
  it.each([
    '.config/Keel',
    '.config/Keel/settings.json',
    'link/settings.json',
    'link',
    '.config/Keel/new.txt',
  ])(
    'refuses %s inside the hidden folder, directly or through a link, without naming where it lies',
    (arg) => {
      let caught: unknown;
      try {
        resolveInWorkspace(ws, arg, { argName: 'path', hidden: hidden() });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PathEscapeError);
      expect((caught as PathEscapeError).code).toBe('hidden');
      expect((caught as Error).message).not.toContain(dir);
    },
  );

  it('refuses the hidden folder by its absolute path, and through a spelling that reaches it by a link', () => {
    const viaLink = path.join(dir, 'alias');
    fs.symlinkSync(ws, viaLink);
    for (const arg of [path.join(keelHome, 'settings.json'), path.join(ws, 'link', 'sessions')]) {
      expect(() => resolveInWorkspace(ws, arg, { argName: 'path', hidden: hidden() })).toThrow(
        /Keel's own data folder/,
      );
    }
    // The hidden folder named by a link spelling is still the same folder.
    expect(() =>
      resolveInWorkspace(ws, '.config/Keel/settings.json', {
        argName: 'path',
        hidden: [path.join(viaLink, '.config', 'Keel')],
      }),
    ).toThrow(/Keel's own data folder/);
  });

  it('leaves the rest of the root alone, and hides nothing from a root that lies inside the hidden folder', () => {
    expect(resolveInWorkspace(ws, 'README.md', { argName: 'path', hidden: hidden() })).toBe(
      path.join(ws, 'README.md'),
    );
    expect(resolveInWorkspace(ws, '.config', { argName: 'path', hidden: hidden() })).toBe(
      path.join(ws, '.config'),
    );
    const own = path.join(keelHome, 'sessions', 's1');
    expect(resolveInWorkspace(own, 'x.txt', { argName: 'path', hidden: hidden() })).toBe(
      path.join(own, 'x.txt'),
    );
    expect(hiddenFoldersUnder(own, hidden())).toEqual([]);
    expect(hiddenFoldersUnder(ws, hidden())).toEqual([keelHome]);
    expect(hiddenFoldersUnder(ws, [path.join(dir, 'missing')])).toEqual([]);
  });
});

describe.each<Pinning>(['procfd', 'portable'])('confined files with hidden folders [%s]', (pinning) => {
  it('refuses to read, write or remove inside the hidden folder', async () => {
    const opts = { argName: 'path', hidden: hidden(), pinning };
    await expect(readFileConfined(ws, 'link/settings.json', { ...opts, maxBytes: 1024 })).rejects.toThrow(
      /Keel's own data folder/,
    );
    await expect(
      writeFileConfined(ws, '.config/Keel/mcp-approvals.jsonl', 'x\n', { ...opts, fsync: false }),
    ).rejects.toThrow(/Keel's own data folder/);
    expect(() => removeFileConfined(ws, '.config/Keel/settings.json', opts)).toThrow(
      /Keel's own data folder/,
    );
    expect(fs.existsSync(path.join(keelHome, 'mcp-approvals.jsonl'))).toBe(false);
    expect(fs.readFileSync(path.join(keelHome, 'settings.json'), 'utf8')).toBe('{}\n');
  });

  it('names a parent that is not a folder relative to the root, not by its host path', async () => {
    let caught: unknown;
    try {
      await writeFileConfined(ws, 'README.md/x', 'x', { argName: 'path', pinning, fsync: false });
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).toMatch(/"README\.md" is not a folder/);
    expect((caught as Error).message).not.toContain(dir);
  });
});
