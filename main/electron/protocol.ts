import fs from 'node:fs/promises';
import { contentTypeOf, resolveStaticFile } from '../server/staticFiles.js';
import { APP_HOST, RENDERER_CSP } from './security.js';

/** Headers on every keel:// response: the strict CSP and the usual hardening. */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'content-security-policy': RENDERER_CSP,
    'x-content-type-options': 'nosniff',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'referrer-policy': 'no-referrer',
  };
}

/**
 * The keel:// handler: serves files of the built renderer (out/renderer) for host `app` only, GET/HEAD only,
 * confined to that folder (no `..`, no dotfiles, no symlinks out), each with the CSP header.
 */
export function createAppProtocolHandler(rendererDir: string): (request: Request) => Promise<Response> {
  return async (request) => {
    const plain = (status: number, text: string) =>
      new Response(text, { status, headers: appResponseHeaders('text/plain; charset=utf-8') });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return plain(400, 'bad request');
    }
    if (url.host !== APP_HOST) return plain(404, 'not found');
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'method not allowed');
    const file = resolveStaticFile(rendererDir, url.pathname);
    if (!file) return plain(404, 'not found');
    const body = request.method === 'HEAD' ? null : await fs.readFile(file);
    return new Response(body, { status: 200, headers: appResponseHeaders(contentTypeOf(file)) });
  };
}
