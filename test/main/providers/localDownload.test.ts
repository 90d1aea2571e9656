import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pullModel, PullError, type PullProgress } from '../../../main/providers/local/download.js';
import { startGgufServer, type GgufServer } from '../../support/ggufServer.js';
import { writeTinyModel } from '../../support/tinyModel.js';

/* Model downloads against a loopback HTTP server (support/ggufServer.ts) serving the tiny GGUF. */
let dir: string;
let body: Buffer;
let sha: string;
let server: GgufServer;
let base: string;
let ranges: (string | undefined)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-pull-'));
  writeTinyModel(join(dir, 'source.gguf'));
  body = readFileSync(join(dir, 'source.gguf'));
  sha = createHash('sha256').update(body).digest('hex');
  server = await startGgufServer(body, sha);
  base = server.base;
  ranges = server.ranges;
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('pullModel', () => {
  it('reports progress, resumes after being stopped, and checks the published hash', async () => {
    const dest = join(dir, 'models', 'tiny.gguf');
    const controller = new AbortController();
    const seen: PullProgress[] = [];
    await expect(
      pullModel({
        url: `${base}/tiny.gguf`,
        dest,
        signal: controller.signal,
        onProgress: (p) => {
          seen.push(p);
          if (p.received > body.length / 3) controller.abort();
        },
      }),
    ).rejects.toThrow();
    const partial = statSync(`${dest}.part`).size;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(body.length);
    expect(existsSync(dest)).toBe(false);
    expect(seen[0]).toMatchObject({ total: body.length });
    expect(seen.at(-1)?.bytesPerSecond).toBeGreaterThan(0);
    expect(seen.at(-1)?.secondsLeft).toBeGreaterThan(0);

    ranges.length = 0;
    const progress: PullProgress[] = [];
    const pulled = await pullModel({ url: `${base}/tiny.gguf`, dest, onProgress: (p) => progress.push(p) });
    expect(ranges).toEqual([`bytes=${partial}-`]);
    expect(progress[0]!.received).toBeGreaterThan(partial);
    expect(pulled).toEqual({ path: dest, sha256: sha, bytes: body.length });
    expect(readFileSync(dest).equals(body)).toBe(true);
    expect(existsSync(`${dest}.part`)).toBe(false);
  });

  it('refuses and deletes a file whose hash is not the published one', async () => {
    const dest = join(dir, 'wrong', 'tiny.gguf');
    await expect(pullModel({ url: `${base}/wrong.gguf`, dest })).rejects.toThrow(/is not the published file/);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
    // A hash given by the user wins over the server's.
    await expect(pullModel({ url: `${base}/wrong.gguf`, dest, sha256: sha })).resolves.toMatchObject({
      sha256: sha,
    });
  });

  it('refuses a file without a published hash unless one is given', async () => {
    const dest = join(dir, 'nohash', 'tiny.gguf');
    await expect(pullModel({ url: `${base}/nohash.gguf`, dest })).rejects.toThrow(PullError);
    await expect(pullModel({ url: `${base}/nohash.gguf`, dest, sha256: sha })).resolves.toMatchObject({
      bytes: body.length,
    });
  });
});
