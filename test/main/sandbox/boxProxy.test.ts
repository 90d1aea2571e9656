import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHostAllowed, startAllowlistProxy, type AllowlistProxy } from '../../../main/sandbox/boxProxy.js';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import { boxedSandbox, createArea, run, type RunnerArea } from '../runner/runnerFixtures.js';

let dir: string;
let registry: http.Server;
let registryPort: number;
let registryHits = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'keel-proxy-test-'));
  // The stand-in for an allowlisted package registry, reachable only through the proxy's hosts mapping.
  registry = http.createServer((request, response) => {
    registryHits += 1;
    response.end(`registry says hi to ${request.headers.host ?? '?'} ${request.url ?? ''}`);
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  registryPort = (registry.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => registry.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Sends raw text to the proxy's Unix socket and returns everything it answers. */
function ask(socketPath: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let answer = '';
    socket.on('data', (data) => {
      answer += data.toString();
      if (answer.includes('registry says hi')) socket.end();
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(text);
  });
}

describe('the allowlist', () => {
  it('matches exact hosts, wildcard subdomains (not the apex), ports and case-insensitively', () => {
    const allow = ['registry.npmjs.org', '*.github.com', 'pypi.org:443'];
    expect(isHostAllowed(allow, 'registry.npmjs.org', 443)).toBe(true);
    expect(isHostAllowed(allow, 'REGISTRY.npmjs.org.', 80)).toBe(true);
    expect(isHostAllowed(allow, 'evil-registry.npmjs.org', 443)).toBe(false);
    expect(isHostAllowed(allow, 'registry.npmjs.org.evil.com', 443)).toBe(false);
    expect(isHostAllowed(allow, 'codeload.github.com', 443)).toBe(true);
    expect(isHostAllowed(allow, 'github.com', 443)).toBe(false);
    expect(isHostAllowed(allow, 'pypi.org', 443)).toBe(true);
    expect(isHostAllowed(allow, 'pypi.org', 8080)).toBe(false);
    expect(isHostAllowed([], 'anything.com', 443)).toBe(false);
  });

  it('rejects a malformed entry with a message saying what is expected', async () => {
    await expect(startAllowlistProxy({ allow: ['https://x.org/path'], listen: { port: 0 } })).rejects.toThrow(
      /host, \*\.domain or host:port/,
    );
  });
});

describe('the allowlist proxy', () => {
  let proxy: AllowlistProxy;
  const socketPath = () => path.join(dir, 'proxy.sock');

  beforeAll(async () => {
    proxy = await startAllowlistProxy({
      allow: ['registry.test', 'localhost'],
      hosts: { 'registry.test': '127.0.0.1' },
      listen: { socketPath: socketPath() },
    });
  });
  afterAll(() => proxy.close());

  it('tunnels CONNECT to an allowlisted host', async () => {
    const answer = await ask(
      socketPath(),
      `CONNECT registry.test:${registryPort} HTTP/1.1\r\nHost: registry.test:${registryPort}\r\n\r\n` +
        `GET /tunnel HTTP/1.1\r\nHost: registry.test\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(answer).toContain('registry says hi to registry.test /tunnel');
  });

  it('forwards plain absolute-form HTTP to an allowlisted host', async () => {
    const answer = await ask(
      socketPath(),
      `GET http://registry.test:${registryPort}/plain HTTP/1.1\r\nHost: registry.test:${registryPort}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain(`registry says hi to registry.test:${registryPort} /plain`);
  });

  it('refuses hosts that are not on the list, for CONNECT and plain HTTP', async () => {
    const hitsBefore = registryHits;
    const connect = await ask(
      socketPath(),
      `CONNECT evil.test:${registryPort} HTTP/1.1\r\nHost: evil.test\r\n\r\n`,
    );
    expect(connect).toMatch(/^HTTP\/1\.1 403/);
    expect(connect).toContain('evil.test');
    const plain = await ask(
      socketPath(),
      `GET http://127.0.0.1:${registryPort}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(plain).toMatch(/^HTTP\/1\.1 403/);
    expect(registryHits).toBe(hitsBefore);
    expect(proxy.decisions.filter((d) => !d.allowed).map((d) => d.host)).toEqual(
      expect.arrayContaining(['evil.test', '127.0.0.1']),
    );
  });

  it('refuses an allowlisted name that resolves to this machine unless it is pinned in hosts', async () => {
    const hitsBefore = registryHits;
    const answer = await ask(
      socketPath(),
      `CONNECT localhost:${registryPort} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    expect(answer).toMatch(/local address/);
    expect(registryHits).toBe(hitsBefore);
  });
});

describe('allowlisted network from inside the box', () => {
  let area: RunnerArea;
  let sandbox: SandboxInfo;

  beforeAll(async () => {
    area = createArea();
    sandbox = await boxedSandbox();
  });
  afterAll(() => area.cleanup());

  it('reaches an allowlisted host through the proxy, is refused elsewhere, and still has no direct route', async () => {
    const hitsBefore = registryHits;
    const url = (host: string) => `http://${host}:${registryPort}/from-the-box`;
    const result = await run(
      area,
      sandbox,
      [
        `curl -sS --max-time 5 ${url('registry.test')}; echo " plain=$?"`,
        `curl -sS --max-time 5 --proxytunnel ${url('registry.test')}; echo " tunnel=$?"`,
        `curl -sS --max-time 5 -o /dev/null -w 'evil=%{http_code}\\n' ${url('evil.test')}`,
        `curl -sS --max-time 5 --proxytunnel ${url('evil.test')} 2>&1 | tail -1`,
        `curl -sS --max-time 3 --noproxy '*' http://127.0.0.1:${registryPort}/ 2>/dev/null; echo "direct=$?"`,
      ].join('\n'),
      { network: { allow: ['registry.test'], hosts: { 'registry.test': '127.0.0.1' } } },
    );
    expect(result.excerpt).toMatch(/registry says hi to registry\.test:\d+ \/from-the-box plain=0/);
    expect(result.excerpt).toMatch(/registry says hi to registry\.test:\d+ \/from-the-box tunnel=0/);
    expect(result.excerpt).toContain('evil=403');
    expect(result.excerpt).toMatch(/CONNECT tunnel failed, response 403|403/);
    expect(result.excerpt).toMatch(/direct=[1-9]/);
    expect(registryHits - hitsBefore).toBe(2);
    expect(result.networkRefused).toContain(`evil.test:${registryPort}`);
  });
});
