import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfinedFileError, streamToFileConfined } from '../../../main/sandbox/paths.js';
import type { Pinning } from '../../../main/sandbox/paths.js';
import { createFixture } from './pathsFixture.js';
import type { Fixture } from './pathsFixture.js';

let f: Fixture;
let spoolRoot: string;
const savedTmpdir = process.env['TMPDIR'];

beforeEach(() => {
  f = createFixture();
  // In-place writes park streams under os.tmpdir(): a private one shows that nothing is left there.
  spoolRoot = path.join(f.base, 'tmp');
  fs.mkdirSync(spoolRoot);
  process.env['TMPDIR'] = spoolRoot;
});

afterEach(() => {
  if (savedTmpdir === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmpdir;
  f.cleanup();
});

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<string | Uint8Array> {
  for (const part of parts) {
    await new Promise((resolve) => setImmediate(resolve));
    yield part;
  }
}

describe.each<Pinning>(['procfd', 'portable'])('streamed confined writes [%s]', (pinning) => {
  it('writes the chunks as they arrive (text as UTF-8) and leaves no temp or spool file', async () => {
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'old');
    const result = await streamToFileConfined(f.ws, 'a.txt', chunks('héllo ', Buffer.from('wörld')), {
      argName: 'path',
      pinning,
    });
    expect(result).toEqual({ path: path.join(f.ws, 'a.txt'), bytes: 13, created: false, committed: true });
    expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('héllo wörld');
    expect(fs.readdirSync(f.ws)).toEqual(['a.txt']);
    expect(fs.readdirSync(spoolRoot)).toEqual([]);
  });

  it('leaves the target as it was when the last check refuses the bytes', async () => {
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'old');
    const refused = await streamToFileConfined(f.ws, 'a.txt', chunks('new'), {
      argName: 'path',
      pinning,
      beforeCommit: () => false,
    });
    expect(refused).toMatchObject({ committed: false, created: false, bytes: 3 });
    expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('old');
    const none = await streamToFileConfined(f.ws, 'new.txt', 'bytes', {
      argName: 'path',
      pinning,
      beforeCommit: () => false,
    });
    expect(none.committed).toBe(false);
    expect(fs.readdirSync(f.ws)).toEqual(['a.txt']);
    expect(fs.readdirSync(spoolRoot)).toEqual([]);
  });

  it("throws a failing stream's own error and leaves the target as it was", async () => {
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'old');
    const failure = new Error('upload cut off');
    async function* failing(): AsyncGenerator<string> {
      yield 'partial';
      await new Promise((resolve) => setImmediate(resolve));
      throw failure;
    }
    await expect(streamToFileConfined(f.ws, 'a.txt', failing(), { argName: 'path', pinning })).rejects.toBe(
      failure,
    );
    expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('old');
    expect(fs.readdirSync(f.ws)).toEqual(['a.txt']);
    expect(fs.readdirSync(spoolRoot)).toEqual([]);
  });

  it('sets the exact mode asked for, also on a file it replaces', async () => {
    const previous = process.umask(0o077);
    try {
      await streamToFileConfined(f.ws, 'new.sh', chunks('#!/bin/sh\n'), {
        argName: 'path',
        pinning,
        chmod: (existing) => (existing ? 0o700 : 0o755),
      });
      expect(fs.statSync(path.join(f.ws, 'new.sh')).mode & 0o777).toBe(0o755);
      await streamToFileConfined(f.ws, 'new.sh', 'echo\n', {
        argName: 'path',
        pinning,
        chmod: (existing) => (existing ? 0o700 : 0o755),
      });
      expect(fs.statSync(path.join(f.ws, 'new.sh')).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it('replaces a hard-linked file at its name only where the write renames', async () => {
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'shared');
    fs.linkSync(path.join(f.ws, 'a.txt'), path.join(f.ws, 'b.txt'));
    const write = streamToFileConfined(f.ws, 'b.txt', chunks('mine'), {
      argName: 'path',
      pinning,
      replaceHardLinked: true,
    });
    if (pinning === 'procfd') {
      await write;
      expect(fs.readFileSync(path.join(f.ws, 'b.txt'), 'utf8')).toBe('mine');
    } else {
      // In place, the other name would change too: still refused.
      await expect(write).rejects.toMatchObject({ code: 'hard_linked' });
      expect(fs.readFileSync(path.join(f.ws, 'b.txt'), 'utf8')).toBe('shared');
    }
    expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('shared');
  });

  it('refuses a path outside before reading the stream', async () => {
    let read = false;
    async function* watched(): AsyncGenerator<string> {
      await new Promise((resolve) => setImmediate(resolve));
      read = true;
      yield 'x';
    }
    await expect(
      streamToFileConfined(f.ws, '../outside/new.txt', watched(), { argName: 'path', pinning }),
    ).rejects.toMatchObject({ code: 'escape' });
    expect(read).toBe(false);
    expect(fs.existsSync(path.join(f.outside, 'new.txt'))).toBe(false);
    await expect(
      streamToFileConfined(f.ws, 'x.txt', 'x', { argName: 'path', pinning, expectedRealPath: f.evil }),
    ).rejects.toBeInstanceOf(ConfinedFileError);
  });
});
