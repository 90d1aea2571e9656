import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server for model downloads, serving one file the way Hugging Face serves LFS files: Range requests
 * (206 with Content-Range), the SHA-256 in X-Linked-Etag (a URL containing "wrong" publishes a wrong one,
 * "nohash" none). It sends 64 KiB every `intervalMs`, slowly enough to stop a download halfway.
 */
export type GgufServer = { base: string; ranges: (string | undefined)[]; close: () => Promise<void> };

export async function startGgufServer(body: Buffer, sha256: string, intervalMs = 5): Promise<GgufServer> {
  const ranges: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    ranges.push(req.headers.range);
    const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = match ? Number(match[1]) : 0;
    const published = req.url?.includes('wrong') ? 'f'.repeat(64) : sha256;
    const headers: Record<string, string> = {
      'content-length': String(body.length - start),
      ...(req.url?.includes('nohash') ? {} : { 'x-linked-etag': `"${published}"` }),
    };
    if (match) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(match ? 206 : 200, headers);
    let at = start;
    const timer = setInterval(() => {
      if (at >= body.length || res.destroyed) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(body.subarray(at, at + 65536));
      at += 65536;
    }, intervalMs);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ranges,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
