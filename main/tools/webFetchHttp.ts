import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';

/*
 * One HTTP request of web_fetch, to an address already checked (main/sandbox/fetchTarget.ts): the socket
 * connects to that address (the lookup is answered with it, so TLS still checks the certificate against the
 * host name), the body is streamed and cut at the byte cap (decompressed bytes count), and a deadline covers
 * the whole exchange. No cookies, no credentials, no proxy from the environment.
 */

/** What one request gave: a redirect to follow (or not), or a response whose body was read up to the cap. */
export type HopResult =
  | { kind: 'redirect'; status: number; location: string }
  | {
      kind: 'response';
      status: number;
      contentType: string;
      body: Buffer;
      /** The body went on past the cap: what is here is its start. */
      truncated: boolean;
    }
  | { kind: 'refused'; status: number; contentType: string };

/** Options of one request. */
export type HopOptions = {
  address: string;
  family: 4 | 6;
  maxBytes: number;
  /** Absolute time (ms since epoch) after which the request is abandoned. */
  deadline: number;
  signal?: AbortSignal;
  /** Whether a response of this content type is read at all (binaries are refused before their body). */
  accepts: (contentType: string) => boolean;
};

/** Thrown when the deadline passes or the call is stopped; the message is for the model. */
export class HopError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HopError';
  }
}

const HEADERS = {
  'user-agent': 'Keel-web_fetch/1',
  accept: 'text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1',
  'accept-encoding': 'gzip, deflate, br',
};

/** Performs one GET of `url` against the checked address. */
export function fetchHop(url: URL, options: HopOptions): Promise<HopResult> {
  const remaining = options.deadline - Date.now();
  if (remaining <= 0) return Promise.reject(new HopError('timed out'));
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    const all = (lookupOptions as { all?: boolean }).all === true;
    if (all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: options.address, family: options.family },
      ]);
    } else callback(null, options.address, options.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<HopResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const request = client.request(url, {
      method: 'GET',
      headers: HEADERS,
      lookup: pinned,
      agent: false,
      ...(url.protocol === 'https:' ? { servername: url.hostname.replace(/^\[|\]$/g, '') } : {}),
    });
    const fail = (message: string) => {
      finish(() => reject(new HopError(message)));
      request.destroy();
    };
    const timer = setTimeout(() => fail('timed out'), remaining);
    const onAbort = () => fail('stopped');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => fail(error.message));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const contentType = String(response.headers['content-type'] ?? '');
      const location = response.headers.location;
      if (status >= 300 && status < 400 && typeof location === 'string') {
        response.resume();
        finish(() => resolve({ kind: 'redirect', status, location }));
        request.destroy();
        return;
      }
      if (!options.accepts(contentType)) {
        finish(() => resolve({ kind: 'refused', status, contentType }));
        request.destroy();
        return;
      }
      let body: Readable = response;
      const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
      if (encoding === 'gzip' || encoding === 'x-gzip') body = response.pipe(zlib.createGunzip());
      else if (encoding === 'deflate') body = response.pipe(zlib.createInflate());
      else if (encoding === 'br') body = response.pipe(zlib.createBrotliDecompress());
      const chunks: Buffer[] = [];
      let bytes = 0;
      body.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = options.maxBytes - bytes;
        if (chunk.length > room) {
          // Stop reading here: the rest of the page is never downloaded, however long it is.
          chunks.push(chunk.subarray(0, room));
          bytes += room;
          const cut = Buffer.concat(chunks);
          finish(() => resolve({ kind: 'response', status, contentType, body: cut, truncated: true }));
          request.destroy();
          return;
        }
        chunks.push(chunk);
        bytes += chunk.length;
      });
      body.on('end', () =>
        finish(() =>
          resolve({ kind: 'response', status, contentType, body: Buffer.concat(chunks), truncated: false }),
        ),
      );
      body.on('error', (error) => fail(`the response could not be read: ${error.message}`));
      response.on('aborted', () => fail('the server closed the connection mid-response'));
    });
    request.end();
  });
}
