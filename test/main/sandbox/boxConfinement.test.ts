import { randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import type { RunCommandOptions, RunCommandResult } from '../../../main/runner/boxedCommand.js';
import { boxedSandbox, createArea, run, snapshotTree, type RunnerArea } from '../runner/runnerFixtures.js';

/**
 * The bad-input suite for the box (runner share): network attempts, writes outside the workspace,
 * reading host secrets, reaching host processes and sockets. Every case runs a real command in the
 * real pty inside the real bwrap, asserts the safe outcome, and afterwards that nothing outside the
 * workspace changed.
 */

let area: RunnerArea;
let sandbox: SandboxInfo;
const token = randomBytes(6).toString('hex');
let fakeHome: string;
let keelData: string;
let server: http.Server;
let serverPort: number;
let serverHits = 0;
let hostAddress: string | null = null;
let runSocketDir: string;
let unixServer: net.Server;
let unixHits = 0;
let tmpSocket: string;
let tmpUnixServer: net.Server;
let snapshots: Record<string, string>;

const escapeTargets = () => [
  `/etc/keel-escape-${token}`,
  `/usr/keel-escape-${token}`,
  `/var/tmp/keel-escape-${token}`,
  `${os.tmpdir()}/keel-escape-${token}`,
  `/run/keel-escape-${token}`,
  path.join(os.homedir(), `keel-escape-${token}`),
];

beforeAll(async () => {
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
  // Under /var/tmp the sibling folder stays visible (read-only) inside the box, which is the harder case.
  area = createArea('/var/tmp');
  fakeHome = path.join(area.root, 'home');
  keelData = path.join(area.root, 'keel-data');
  mkdirSync(path.join(fakeHome, '.ssh'), { recursive: true });
  mkdirSync(path.join(fakeHome, '.aws'), { recursive: true });
  mkdirSync(path.join(fakeHome, '.cargo', 'bin'), { recursive: true });
  writeFileSync(path.join(fakeHome, '.ssh', 'id_ed25519'), `FAKE-PRIVATE-KEY-${token}`);
  writeFileSync(path.join(fakeHome, '.aws', 'credentials'), `aws_secret_access_key=FAKE-${token}`);
  writeFileSync(path.join(fakeHome, '.cargo', 'bin', 'tool'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
  mkdirSync(keelData);
  writeFileSync(path.join(keelData, 'settings.json'), `{"apiKey":"FAKE-${token}"}`);
  writeFileSync(path.join(area.outside, 'victim.txt'), 'original');
  mkdirSync(path.join(area.workspace, '.git', 'hooks'), { recursive: true });

  server = http.createServer((_request, response) => {
    serverHits += 1;
    response.end('host service reached');
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  serverPort = (server.address() as net.AddressInfo).port;
  hostAddress =
    Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address ?? null;

  // A host Unix socket where docker.sock / D-Bus would live, and one in the host /tmp.
  runSocketDir = `/run/keel-test-${token}`;
  mkdirSync(runSocketDir);
  unixServer = net.createServer((socket) => {
    unixHits += 1;
    socket.end('host socket reached\n');
  });
  await new Promise<void>((resolve) => unixServer.listen(path.join(runSocketDir, 'daemon.sock'), resolve));
  tmpSocket = path.join(os.tmpdir(), `keel-test-${token}.sock`);
  tmpUnixServer = net.createServer((socket) => {
    unixHits += 1;
    socket.end('host socket reached\n');
  });
  await new Promise<void>((resolve) => tmpUnixServer.listen(tmpSocket, resolve));

  snapshots = {
    outside: snapshotTree(area.outside),
    home: snapshotTree(fakeHome),
    data: snapshotTree(keelData),
  };
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => unixServer.close(resolve));
  await new Promise((resolve) => tmpUnixServer.close(resolve));
  rmSync(runSocketDir, { recursive: true, force: true });
  rmSync(tmpSocket, { force: true });
  for (const target of escapeTargets()) rmSync(target, { force: true });
  area.cleanup();
});

function box(command: string, extra: Partial<RunCommandOptions> = {}): Promise<RunCommandResult> {
  return run(area, sandbox, command, { hostHome: fakeHome, hidden: [keelData], timeoutMs: 8_000, ...extra });
}

/** After each case: nothing outside the workspace changed and no escape file appeared. */
function expectNothingOutsideChanged(): void {
  expect(snapshotTree(area.outside)).toBe(snapshots.outside);
  expect(snapshotTree(fakeHome)).toBe(snapshots.home);
  expect(snapshotTree(keelData)).toBe(snapshots.data);
  expect(readFileSync(path.join(area.outside, 'victim.txt'), 'utf8')).toBe('original');
  for (const target of escapeTargets()) expect(existsSync(target), target).toBe(false);
}

describe('network attempts from inside the box fail', () => {
  const hostUrl = () => `http://127.0.0.1:${serverPort}/`;

  it.each([
    ['curl to a host loopback service', () => `curl -sS --max-time 3 ${hostUrl()}; echo "rc=$?"`],
    ['wget to a host loopback service', () => `wget -q -T 3 -O - ${hostUrl()}; echo "rc=$?"`],
    ['raw bash /dev/tcp', () => `exec 3<>/dev/tcp/127.0.0.1/${serverPort} && echo connected; echo "rc=$?"`],
    [
      'a python socket',
      () =>
        `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${serverPort}), 3); print('connected')"; echo "rc=$?"`,
    ],
    ['curl ignoring any proxy', () => `curl -sS --noproxy '*' --max-time 3 ${hostUrl()}; echo "rc=$?"`],
  ])('%s', async (_name, command) => {
    const hitsBefore = serverHits;
    const result = await box(command());
    expect(result.excerpt).not.toContain('host service reached');
    expect(result.excerpt).not.toMatch(/^connected/m);
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    expect(serverHits).toBe(hitsBefore);
    expectNothingOutsideChanged();
  });

  it('the host non-loopback address is unreachable too', async (context) => {
    if (hostAddress === null) {
      context.skip('this machine has no non-loopback IPv4 address');
      return;
    }
    const hitsBefore = serverHits;
    const result = await box(`curl -sS --max-time 3 http://${hostAddress}:${serverPort}/; echo "rc=$?"`);
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    expect(serverHits).toBe(hitsBefore);
  });

  it('DNS lookups fail (getent and a python resolver)', async () => {
    const result = await box(
      'getent hosts registry.npmjs.org; echo "getent=$?"; ' +
        'python3 -c "import socket; print(socket.getaddrinfo(\'registry.npmjs.org\', 443))" 2>&1 | tail -1',
    );
    expect(result.excerpt).toMatch(/getent=[1-9]/);
    expect(result.excerpt).toMatch(/gaierror|Temporary failure|Name or service not known/);
  });

  it('UDP to a public resolver has no route, and only the loopback interface exists', async () => {
    const result = await box(
      "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('8.8.8.8', 53)); print('sent')\" 2>&1 | tail -1; " +
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
    );
    expect(result.excerpt).toMatch(/Network is unreachable/);
    expect(result.excerpt).not.toMatch(/^sent/m);
    expect(result.excerpt.trim().split('\n').at(-1)).toBe('lo');
  });

  it('host Unix sockets (where docker.sock and D-Bus live, and in /tmp) cannot be reached', async () => {
    const hitsBefore = unixHits;
    const script = (socketPath: string) =>
      `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${socketPath}'); print(s.recv(100))" 2>&1 | tail -1`;
    const result = await box(`${script(path.join(runSocketDir, 'daemon.sock'))}; ${script(tmpSocket)}`);
    expect(result.excerpt).not.toContain('host socket reached');
    expect(result.excerpt).toMatch(/No such file or directory/);
    expect(unixHits).toBe(hitsBefore);
  });
});

describe('writes outside the workspace fail or stay private to the box', () => {
  it.each([
    ['into /etc', () => `echo x > /etc/keel-escape-${token}`],
    ['into /usr', () => `touch /usr/keel-escape-${token}`],
    ['into /var/tmp (host-persistent)', () => `touch /var/tmp/keel-escape-${token}`],
    ['into the prefix-sibling folder', () => `echo pwned > ${path.join(area.outside, 'victim.txt')}`],
    ['a new file in the prefix-sibling folder', () => `touch ${path.join(area.outside, 'new.txt')}`],
    ['a chmod of an outside file', () => `chmod 777 ${path.join(area.outside, 'victim.txt')}`],
    ['a remount of / read-write', () => 'mount -o remount,rw / && touch /etc/keel-remounted'],
    [
      'a new user namespace to regain capabilities',
      () => `unshare -Urm sh -c 'mount -o remount,rw / && touch /etc/keel-escape-${token}'`,
    ],
  ])('%s', async (_name, command) => {
    const result = await box(`${command()}; echo "rc=$?"`);
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    expect(result.excerpt).toMatch(
      /Read-only file system|Permission denied|Operation not permitted|not permitted/i,
    );
    expectNothingOutsideChanged();
  });

  it('writes through a symlink in the workspace that points outside', async () => {
    symlinkSync(area.outside, path.join(area.workspace, 'link-out'));
    const result = await box('echo pwned > link-out/victim.txt; echo "rc=$?"');
    expect(result.excerpt).toMatch(/Read-only file system/);
    expectNothingOutsideChanged();
  });

  it('a hard link from the workspace to an outside file cannot be made or written', async () => {
    const result = await box(
      `ln ${path.join(area.outside, 'victim.txt')} hard-link; echo "rc=$?"; echo x >> hard-link`,
    );
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    expectNothingOutsideChanged();
  });

  it('a pre-existing hard link in the workspace is the workspace file; the box cannot reach its twin by path', async () => {
    // A link made outside the box shares the inode: the box may write the inode (it is the user's file
    // in the workspace), which is why the path layer refuses writes to multi-link files. The box itself
    // must still not be able to name the outside path.
    linkSync(path.join(area.outside, 'victim.txt'), path.join(area.root, 'twin.txt'));
    const result = await box(
      `cat ${path.join(area.root, 'twin.txt')} > /dev/null && echo readable; echo x > ${path.join(area.root, 'twin.txt')}; echo "rc=$?"`,
    );
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    rmSync(path.join(area.root, 'twin.txt'));
    expectNothingOutsideChanged();
  });

  it('the host /tmp and /run seen inside are private: writes there vanish with the box', async () => {
    const result = await box(
      `echo x > /tmp/keel-escape-${token} && echo x > /run/keel-escape-${token} && echo written; ls /tmp | wc -l`,
    );
    expect(result.excerpt).toContain('written');
    expectNothingOutsideChanged();
  });

  it('the workspace itself is writable, and pinned paths inside it are not', async () => {
    const hooks = path.join(area.workspace, '.git', 'hooks');
    const result = await box(
      'echo ok > made.txt && cat made.txt; echo evil > .git/hooks/pre-commit; echo "rc=$?"',
      {
        readOnly: [hooks],
      },
    );
    expect(result.excerpt).toContain('ok');
    expect(readFileSync(path.join(area.workspace, 'made.txt'), 'utf8')).toBe('ok\n');
    expect(result.excerpt).toMatch(/rc=[1-9]/);
    expect(existsSync(path.join(hooks, 'pre-commit'))).toBe(false);
  });
});

describe('host secrets and processes stay out of reach', () => {
  it('the real home is hidden (keys, cloud credentials) while toolchains stay runnable', async () => {
    const result = await box(
      `cat ${fakeHome}/.ssh/id_ed25519 ${fakeHome}/.aws/credentials 2>&1; ls -A ${fakeHome}; ${fakeHome}/.cargo/bin/tool; echo "HOME=$HOME"`,
    );
    expect(result.excerpt).not.toContain(`FAKE-PRIVATE-KEY-${token}`);
    expect(result.excerpt).not.toContain(`FAKE-${token}`);
    expect(result.excerpt).toMatch(/No such file or directory/);
    expect(result.excerpt).toContain('tool');
    expect(result.excerpt).toContain('HOME=/tmp/home');
    expectNothingOutsideChanged();
  });

  it("Keel's own data folder is invisible", async () => {
    const result = await box(`ls -A ${keelData} | wc -l; cat ${keelData}/settings.json; echo done`);
    expect(result.excerpt).not.toContain(`FAKE-${token}`);
    expect(result.excerpt.split('\n')[0]).toBe('0');
    expect(result.excerpt).toMatch(/No such file or directory/);
  });

  it('root-owned secret files are not readable (root without capabilities still owns them)', async (context) => {
    if (!existsSync('/etc/shadow') || statSync('/etc/shadow').size === 0) {
      context.skip('no /etc/shadow here');
      return;
    }
    const result = await box('head -c 100 /etc/shadow; echo "rc=$?"; wc -c < /etc/shadow');
    expect(result.excerpt).not.toMatch(/root:/);
    expect(result.excerpt).toMatch(/Permission denied|rc=0\n0/);
  });

  it('the real user home of this machine shows no dotfiles except toolchains', async () => {
    const result = await run(area, sandbox, `ls -A ${os.homedir()} | tr '\\n' ' '`);
    for (const secretPlace of ['.ssh', '.aws', '.npmrc', '.gitconfig', '.config', '.bash_history']) {
      expect(result.excerpt.split(/\s+/)).not.toContain(secretPlace);
    }
  });

  it('host processes are invisible and cannot be signalled', async () => {
    const victim = await import('node:child_process').then(({ spawn }) =>
      spawn('sleep', ['30'], { stdio: 'ignore' }),
    );
    try {
      const result = await box(
        `ps -e --no-headers | wc -l; kill -9 ${victim.pid}; echo "rc=$?"; cat /proc/${process.pid}/environ | wc -c`,
      );
      const [count] = result.excerpt.trim().split('\n');
      expect(Number(count)).toBeLessThan(10);
      expect(result.excerpt).toMatch(/rc=[1-9]/);
      expect(victim.exitCode).toBeNull();
      expect(victim.signalCode).toBeNull();
    } finally {
      victim.kill('SIGKILL');
    }
  });
});
