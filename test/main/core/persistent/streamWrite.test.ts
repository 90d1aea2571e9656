import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeStreamConfined } from '../../../../main/core/persistent/streamWrite.js';
import type { Pinning } from '../../../../main/sandbox/paths.js';
import { makeTemp } from './support.js';

let root: string;

beforeEach(() => {
  root = makeTemp('keel-stream-');
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const modeOf = (file: string) => fs.statSync(path.join(root, file)).mode & 0o7777;

describe.each<Pinning>(['procfd', 'portable'])('staging a stream into a folder [%s]', (pinning) => {
  it('reports the size and sha256 of what it wrote, from every kind of source', async () => {
    const sources = {
      'text.txt': 'héllo',
      'bytes.bin': Buffer.from('héllo'),
      'node.txt': Readable.from([Buffer.from('hé'), Buffer.from('llo')]),
      'web.txt': new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(Buffer.from('hél'));
          controller.enqueue(Buffer.from('lo'));
          controller.close();
        },
      }),
      'iterable.txt': (async function* () {
        yield 'hé';
        await new Promise((resolve) => setImmediate(resolve));
        yield Buffer.from('llo');
      })(),
    };
    for (const [name, source] of Object.entries(sources)) {
      const result = await writeStreamConfined(root, `deep/${name}`, source, { pinning });
      expect(result).toEqual({
        realPath: path.join(root, 'deep', name),
        size: 6,
        sha256: sha256('héllo'),
        written: true,
      });
      expect(fs.readFileSync(path.join(root, 'deep', name), 'utf8')).toBe('héllo');
    }
  });

  it('gives a new file 0644 whatever the umask, keeps the mode of a file it replaces, applies one it is given', async () => {
    const previous = process.umask(0o077);
    try {
      await writeStreamConfined(root, 'new.txt', 'x', { pinning });
      expect(modeOf('new.txt')).toBe(0o644);
      fs.writeFileSync(path.join(root, 'run.sh'), 'old');
      fs.chmodSync(path.join(root, 'run.sh'), 0o751);
      await writeStreamConfined(root, 'run.sh', Readable.from(['new']), { pinning });
      expect(modeOf('run.sh')).toBe(0o751);
      await writeStreamConfined(root, 'new.txt', 'y', { pinning, mode: 0o755 });
      expect(modeOf('new.txt')).toBe(0o755);
    } finally {
      process.umask(previous);
    }
  });

  it("writes the host's protected names (.vscode/), which only the model's tools must ask for", async () => {
    await writeStreamConfined(root, '.vscode/settings.json', '{}', { pinning });
    expect(fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8')).toBe('{}');
  });

  it('replaces a file that has other hard links at its name, never changing the other names', async () => {
    fs.writeFileSync(path.join(root, 'a.txt'), 'shared');
    fs.linkSync(path.join(root, 'a.txt'), path.join(root, 'b.txt'));
    const write = writeStreamConfined(root, 'b.txt', Readable.from(['mine']), { pinning });
    if (pinning === 'procfd') {
      await write;
      expect(fs.readFileSync(path.join(root, 'b.txt'), 'utf8')).toBe('mine');
    } else {
      // The portable strategy writes in place, where every name would change: it refuses instead.
      await expect(write).rejects.toMatchObject({ code: 'hard_linked' });
    }
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('shared');
  });

  it('leaves the target as it was when the last check refuses, or the stream fails', async () => {
    fs.writeFileSync(path.join(root, 'a.txt'), 'old');
    const refused = await writeStreamConfined(root, 'a.txt', Readable.from(['new']), {
      pinning,
      beforeCommit: () => false,
    });
    expect(refused).toMatchObject({ written: false, size: 3, sha256: sha256('new') });
    const failure = new Error('upload cut off');
    const failing = new Readable({ read() {} });
    failing.push('partial');
    setImmediate(() => failing.destroy(failure));
    await expect(writeStreamConfined(root, 'a.txt', failing, { pinning })).rejects.toBe(failure);
    expect(fs.readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('old');
    expect(fs.readdirSync(root)).toEqual(['a.txt']);
  });

  it('refuses a path that leads out of its area, and out of the folder', async () => {
    fs.mkdirSync(path.join(root, 'session'));
    fs.mkdirSync(path.join(root, 'persistent'));
    fs.symlinkSync('../persistent', path.join(root, 'session', 'cross'));
    await expect(
      writeStreamConfined(root, 'session/cross/x.txt', 'x', { within: path.join(root, 'session'), pinning }),
    ).rejects.toMatchObject({ code: 'denied' });
    await expect(writeStreamConfined(root, '../x.txt', 'x', { pinning })).rejects.toMatchObject({
      code: 'escape',
    });
    expect(fs.readdirSync(path.join(root, 'persistent'))).toEqual([]);
  });
});
