import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { localAddressKind, resolveFetchAddress } from '../../main/sandbox/fetchTarget.js';
import { webFetchTool } from '../../main/tools/webFetch.js';
import { fetchHop } from '../../main/tools/webFetchHttp.js';
import type { ToolContext } from '../../main/tools/types.js';
import { errorOf, makeWorkspace, type TempWorkspace } from '../main/tools/helpers.js';

/*
 * web_fetch must never become a way into this machine or its network (issue #32): a file:// URL, a service
 * on the host's loopback, a DNS name that resolves to 127.0.0.1 (also when allowlisted), a redirect to the
 * cloud metadata address 169.254.169.254, a name that answers a public and a local address, credentials in
 * the URL. The "service of the host" is a real loopback server; it must see no request.
 */

let service: http.Server;
let port = 0;
const seen: string[] = [];

beforeAll(async () => {
  service = http.createServer((request, response) => {
    seen.push(`${request.headers.host ?? ''}${request.url ?? ''}`);
    if (request.url === '/to-metadata') {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' }).end('internal admin page');
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  port = (service.address() as AddressInfo).port;
});

afterAll(async () => {
  service.closeAllConnections();
  await new Promise((resolve) => service.close(resolve));
});

let ws: TempWorkspace;
afterEach(() => {
  ws?.cleanup();
  seen.length = 0;
});

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  ws = makeWorkspace();
  return ws.ctx({
    network: { allow: ['127.0.0.1', 'localhost', '169.254.169.254', '*.nip.io'] },
    ...overrides,
  });
}

async function fetchError(url: string, context = ctx()): Promise<string> {
  const outcome = await webFetchTool.execute(webFetchTool.parameters.parse({ url }), context);
  expect(outcome.isError).toBe(true);
  return errorOf(outcome.content);
}

describe('web_fetch refuses local targets', () => {
  it('refuses file:// and other schemes before any approval', async () => {
    const preview = await webFetchTool.preview({ url: 'file:///etc/passwd' }, ctx());
    expect(preview.ok).toBe(false);
    expect(await fetchError('file:///etc/passwd')).toMatch(/file: URLs are not fetched/);
    expect(await fetchError('ftp://example.com/x')).toMatch(/ftp: URLs are not fetched/);
  });

  it('refuses credentials in a URL', async () => {
    expect(await fetchError('https://user:hunter2@example.com/')).toMatch(/user name or password/);
  });

  it('never reaches a loopback service of the host, however the address is spelled, even allowlisted', async () => {
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]', '[::1]', '0.0.0.0']) {
      const message = await fetchError(
        `http://${host}:${port}/admin`,
        ctx({ network: { allow: [host.replace(/^\[|\]$/g, ''), '127.0.0.1'] } }),
      );
      expect(message).toMatch(/is a (loopback|unspecified) address: web_fetch never reaches this machine/);
    }
    expect(seen).toEqual([]);
  });

  it('refuses a DNS name that resolves to 127.0.0.1', async () => {
    expect(await fetchError(`http://localhost:${port}/admin`)).toMatch(
      /localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/,
    );
    expect(seen).toEqual([]);
  });

  it('refuses a name that answers one public and one local address (no choice left to the connection)', async () => {
    const answer = await resolveFetchAddress('rebind.example', {
      resolve: () =>
        Promise.resolve([
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.5', family: 4 },
        ]),
    });
    expect(answer).toEqual({
      refused:
        'rebind.example resolves to 10.0.0.5, which is a private address: web_fetch never reaches this machine or its local network',
    });
  });

  it('connects to the checked address, never to a second lookup of the name', async () => {
    // The name does not resolve at all: the request still lands on the address that was checked.
    const hop = await fetchHop(new URL(`http://never-resolves.invalid:${port}/pinned`), {
      address: '127.0.0.1',
      family: 4,
      maxBytes: 1024,
      deadline: Date.now() + 5000,
      accepts: () => true,
    });
    expect(hop.kind).toBe('response');
    expect(seen).toEqual([`never-resolves.invalid:${port}/pinned`]);
  });

  it('stops at a redirect to the cloud metadata address, even allowlisted', async () => {
    // The first hop reaches the loopback service through the test seam only; the seam does not cover the redirect.
    const message = await fetchError(
      `http://127.0.0.1:${port}/to-metadata`,
      ctx({ fetchTestAddresses: ['127.0.0.1'] }),
    );
    expect(message).toMatch(
      /http:\/\/169\.254\.169\.254\/latest\/meta-data\/ was not fetched: 169\.254\.169\.254 is a link-local address/,
    );
    expect(seen).toEqual([`127.0.0.1:${port}/to-metadata`]);
  });

  it('classifies the local ranges, IPv4 inside IPv6 included', () => {
    expect(localAddressKind('169.254.169.254')).toBe('link-local');
    expect(localAddressKind('192.168.1.1')).toBe('private');
    expect(localAddressKind('172.31.255.255')).toBe('private');
    expect(localAddressKind('100.100.100.200')).toBe('carrier-grade NAT');
    expect(localAddressKind('fd00::1')).toBe('unique-local');
    expect(localAddressKind('64:ff9b::a9fe:a9fe')).toBe('link-local');
    expect(localAddressKind('::ffff:7f00:1')).toBe('loopback');
    expect(localAddressKind('93.184.216.34')).toBeUndefined();
    expect(localAddressKind('2606:4700::1111')).toBeUndefined();
  });
});
