import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

/** How far a pull is: bytes, speed and time left (absent until the size is known). */
export type PullProgress = { received: number; total?: number; bytesPerSecond: number; secondsLeft?: number };

export type PullOptions = {
  url: string;
  /** Where the file goes; `<dest>.part` holds a partial download, resumed with an HTTP Range request. */
  dest: string;
  /**
   * The published SHA-256. Absent: the server's own word, Hugging Face's `X-Linked-Etag` (the LFS object's
   * SHA-256) on the response; with neither, the pull is refused rather than trusted blindly.
   */
  sha256?: string;
  onProgress?: (progress: PullProgress) => void;
  signal?: AbortSignal;
};

export class PullError extends Error {}

/** The hash Hugging Face publishes for an LFS file, from its response headers. */
function publishedHash(headers: Headers): string | undefined {
  const etag = headers.get('x-linked-etag') ?? '';
  const hex = etag.replace(/^W\//, '').replace(/"/g, '');
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Downloads a model file once: resumes a partial `.part` file after a kill (Range: bytes=N-), checks the whole
 * file against the published SHA-256 before it takes its name (a wrong file is deleted and named as such), and
 * reports a full disk as one.
 */
export async function pullModel(
  options: PullOptions,
): Promise<{ path: string; sha256: string; bytes: number }> {
  const { url, dest, signal } = options;
  mkdirSync(path.dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  const have = statSync(part, { throwIfNoEntry: false })?.size ?? 0;
  const response = await fetch(url, {
    ...(have > 0 ? { headers: { range: `bytes=${have}-` } } : {}),
    ...(signal ? { signal } : {}),
  });
  if (response.status === 416 && have > 0) {
    // The part file already holds every byte.
  } else if (!response.ok || !response.body) {
    throw new PullError(`download of ${url} failed: HTTP ${response.status}`);
  }
  const expected = options.sha256 ?? publishedHash(response.headers);
  if (!expected) {
    throw new PullError(`${url} publishes no SHA-256: pass the file's hash (--sha256) to download it`);
  }
  const resumed = response.status === 206;
  let received = resumed ? have : 0;
  const length = Number(response.headers.get('content-length') ?? NaN);
  const total = Number.isFinite(length) ? length + (resumed ? have : 0) : undefined;
  if (response.status !== 416 && response.body) {
    const out = createWriteStream(part, { flags: resumed ? 'a' : 'w' });
    const started = Date.now();
    const startBytes = received;
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        received += chunk.length;
        const seconds = Math.max((Date.now() - started) / 1000, 0.001);
        const bytesPerSecond = (received - startBytes) / seconds;
        options.onProgress?.({
          received,
          ...(total !== undefined ? { total } : {}),
          bytesPerSecond,
          ...(total !== undefined && bytesPerSecond > 0
            ? { secondsLeft: (total - received) / bytesPerSecond }
            : {}),
        });
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
        throw new PullError(
          `the disk is full: ${path.dirname(dest)} needs ${(total ?? received) - received} more bytes free (the part file is kept; pull again to resume)`,
        );
      }
      throw error;
    } finally {
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
    }
  }
  const actual = await hashFile(part);
  if (actual !== expected) {
    rmSync(part, { force: true });
    throw new PullError(
      `${url} is not the published file: sha256 ${actual}, expected ${expected}; it was deleted`,
    );
  }
  renameSync(part, dest);
  return { path: dest, sha256: actual, bytes: statSync(dest).size };
}
