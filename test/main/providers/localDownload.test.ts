import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pullModel, PullError, type PullProgress } from '../../../main/providers/local/download.js';
import { writeTinyModel } from '../../support/tinyModel.js';

/*
 * Model downloads against a loopback HTTP server serving the tiny GGUF the way Hugging Face serves LFS files:
 * Range requests (206), the SHA-256 in X-Linked-Etag. The server sends slowly enough to be stopped mid-file.
 */
let dir: string;
let body: Buffer;
let sha: string;
let server: Server;
let base: string;
const ranges: (string | undefined)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-pull-'));
  writeTinyModel(join(dir, 'source.gguf'));
  body = readFileSync(join(dir, 'source.gguf'));
  sha = createHash('sha256').update(body).digest('hex');
  server = createServer((req, res) => {
    ranges.push(req.headers.range);
    const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = match ? Number(match[1]) : 0;
    const headers: Record<string, string> = {
      'content-length': String(body.length - start),
      ...(req.url?.includes('nohash')
        ? {}
        : { 'x-linked-etag': `"${req.url?.includes('wrong') ? 'f'.repeat(64) : sha}"` }),
    };
    if (match) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(match ? 206 : 200, headers);
    // 64 KiB every 5 ms: a few hundred ms for the whole file, long enough to stop it halfway.
    let at = start;
    const timer = setInterval(() => {
      if (at >= body.length || res.destroyed) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(body.subarray(at, at + 65536));
      at += 65536;
    }, 5);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
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
