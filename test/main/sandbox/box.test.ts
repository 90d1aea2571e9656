import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  detectSandbox,
  probeSandbox,
  requiresApprovalForEveryCommand,
  wrapCommand,
  type SandboxInfo,
  type WrapOptions,
} from '../../../main/sandbox/box.js';
import { buildSeatbeltProfile } from '../../../main/sandbox/boxSeatbelt.js';
import { BWRAP_SECURITY_FLAGS } from '../../../main/sandbox/bwrap.js';

let root: string;
let home: string;
let workspace: string;

const bwrap: SandboxInfo = {
  kind: 'bwrap',
  reason: 'test',
  version: '0.8.0',
  executable: '/usr/bin/bwrap',
  socat: '/usr/bin/socat',
};
const seatbelt: SandboxInfo = {
  kind: 'sandbox-exec',
  reason: 'test',
  version: null,
  executable: '/usr/bin/sandbox-exec',
  socat: null,
};
const none: SandboxInfo = { kind: 'none', reason: 'test', version: null, executable: null, socat: null };

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'keel-box-test-'));
  home = path.join(root, 'home');
  workspace = path.join(home, 'projects', 'app');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  mkdirSync(path.join(home, '.cargo', 'bin'), { recursive: true });
  mkdirSync(path.join(workspace, '.git', 'hooks'), { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'fake key');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function options(extra: Partial<WrapOptions> = {}): WrapOptions {
  return { sandbox: bwrap, command: 'make test', workspace, hostHome: home, network: 'none', ...extra };
}

/** The position of `flag value...` in argv, or -1. */
function indexOfSequence(argv: string[], sequence: string[]): number {
  for (let i = 0; i + sequence.length <= argv.length; i += 1) {
    if (sequence.every((word, k) => argv[i + k] === word)) return i;
  }
  return -1;
}

describe('detectSandbox', () => {
  it('finds a bubblewrap that really starts a box with every namespace here', async () => {
    const sandbox = await detectSandbox({ refresh: true });
    expect(sandbox.kind, sandbox.reason).toBe('bwrap');
    expect(sandbox.version).toMatch(/^\d+\.\d+/);
    expect(sandbox.executable).toMatch(/bwrap$/);
    expect(sandbox.socat).toMatch(/socat$/);
    expect(requiresApprovalForEveryCommand(sandbox)).toBe(false);
  });

  it('reports no sandbox, with an actionable reason, when bwrap is missing or cannot start a box', async () => {
    const missing = await probeSandbox('linux', () => null);
    expect(missing.kind).toBe('none');
    expect(missing.reason).toMatch(/apt install bubblewrap/);

    const broken = path.join(root, 'fake-bwrap');
    writeFileSync(
      broken,
      '#!/bin/sh\n[ "$1" = --version ] && echo "bubblewrap 0.8.0" && exit 0\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const noNamespaces = await probeSandbox('linux', (name) => (name === 'bwrap' ? broken : null));
    expect(noNamespaces.kind).toBe('none');
    expect(noNamespaces.reason).toMatch(/No permissions to create new namespace/);
    expect(noNamespaces.reason).toMatch(/user namespaces/);
    expect(requiresApprovalForEveryCommand(noNamespaces)).toBe(true);

    const windows = await probeSandbox('win32');
    expect(windows.kind).toBe('none');
    expect(windows.reason).toMatch(/every command needs approval/);
  });

  it('requires approval for every command when nothing confines them', () => {
    expect(requiresApprovalForEveryCommand(none)).toBe(true);
    expect(requiresApprovalForEveryCommand(seatbelt)).toBe(false);
  });
});

describe('wrapCommand with bwrap', () => {
  it('always drops capabilities, starts a new session and unshares pid, net, ipc and uts', () => {
    const { argv } = wrapCommand(options());
    expect(argv[0]).toBe('/usr/bin/bwrap');
    for (const flag of [
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
    ]) {
      expect(argv).toContain(flag);
    }
    expect(indexOfSequence(argv, ['--cap-drop', 'ALL'])).toBeGreaterThan(0);
    expect(BWRAP_SECURITY_FLAGS).toContain('--new-session');
    expect(argv.slice(-4)).toEqual(['--', 'bash', '-c', 'make test']);
  });

  it('mounts the root read-only with private /dev, /proc, /tmp and /run and the workspace writable', () => {
    const { argv, env } = wrapCommand(options());
    expect(indexOfSequence(argv, ['--ro-bind', '/', '/'])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--dev', '/dev'])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--proc', '/proc'])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--tmpfs', '/tmp'])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--tmpfs', '/run'])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--bind', workspace, workspace])).toBeGreaterThan(0);
    expect(indexOfSequence(argv, ['--chdir', workspace])).toBeGreaterThan(0);
    expect(env.HOME).toBe('/tmp/home');
    expect(env.TMPDIR).toBe('/tmp');
  });

  it('hides the real home, re-exposes toolchains read-only, and binds the workspace inside it afterwards', () => {
    const { argv } = wrapCommand(options());
    const hidden = indexOfSequence(argv, ['--tmpfs', home]);
    const toolchain = indexOfSequence(argv, [
      '--ro-bind',
      path.join(home, '.cargo', 'bin'),
      path.join(home, '.cargo', 'bin'),
    ]);
    const bound = indexOfSequence(argv, ['--bind', workspace, workspace]);
    expect(hidden).toBeGreaterThan(0);
    expect(toolchain).toBeGreaterThan(hidden);
    expect(bound).toBeGreaterThan(hidden);
    expect(argv).not.toContain(path.join(home, '.ssh'));
  });

  it('never hides the root, even when the home folder is /', () => {
    const { argv } = wrapCommand(options({ hostHome: '/' }));
    expect(indexOfSequence(argv, ['--tmpfs', '/'])).toBe(-1);
    expect(indexOfSequence(argv, ['--ro-bind', '/', '/'])).toBeGreaterThan(0);
  });

  it('pins protected paths read-only on top of the writable workspace, and binds a private home', () => {
    const hooks = path.join(workspace, '.git', 'hooks');
    const privateHome = path.join(root, 'session-home');
    mkdirSync(privateHome, { recursive: true });
    const { argv, env } = wrapCommand(
      options({ readOnly: [hooks, path.join(workspace, 'missing')], home: privateHome }),
    );
    expect(indexOfSequence(argv, ['--ro-bind', hooks, hooks])).toBeGreaterThan(
      indexOfSequence(argv, ['--bind', workspace, workspace]),
    );
    expect(argv).not.toContain(path.join(workspace, 'missing'));
    expect(indexOfSequence(argv, ['--bind', privateHome, privateHome])).toBeGreaterThan(0);
    expect(env.HOME).toBe(privateHome);
  });

  it('refuses a working directory outside the workspace and an allowlist without a proxy', () => {
    expect(() => wrapCommand(options({ cwd: `${workspace}-evil` }))).toThrow(/outside the workspace/);
    expect(() => wrapCommand(options({ network: { allow: ['registry.npmjs.org'] } }))).toThrow(/proxy/);
  });

  it('bridges the allowlist proxy socket in and points the proxy variables at it', () => {
    const socketPath = path.join(root, 'proxy.sock');
    const { argv, env } = wrapCommand(
      options({ network: { allow: ['registry.npmjs.org'] }, proxy: { socketPath } }),
    );
    expect(indexOfSequence(argv, ['--bind', socketPath, '/run/keel/proxy.sock'])).toBeGreaterThan(0);
    expect(argv).toContain('--unshare-net');
    expect(argv.at(-1)).toBe('make test');
    expect(argv.at(-3)).toContain('socat');
    expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(env.NO_PROXY).toContain('127.0.0.1');
  });
});

describe('wrapCommand without a sandbox', () => {
  it('runs plain bash, leaving approval to the caller', () => {
    expect(wrapCommand(options({ sandbox: none })).argv).toEqual(['bash', '-c', 'make test']);
  });
});

describe('the macOS sandbox-exec profile', () => {
  const tmpDir = '/private/var/folders/xy/keel-run-1';

  it('denies the network and all writes except the workspace, the temp folder and terminals', () => {
    const { profile, params } = buildSeatbeltProfile(options({ sandbox: seatbelt, tmpDir }));
    expect(profile.startsWith('(version 1)\n')).toBe(true);
    expect(profile).toContain('(deny network*)');
    expect(profile).toContain('(deny file-write*)');
    expect(profile).not.toContain('network-outbound');
    expect(profile).toContain('(allow file-write* (literal "/dev/null")');
    const writable = Object.entries(params)
      .filter(([key]) => key.startsWith('WRITE_'))
      .map(([, value]) => value);
    expect(writable).toEqual(expect.arrayContaining([tmpDir]));
    expect(writable.some((value) => value.endsWith(path.join('projects', 'app')))).toBe(true);
  });

  it('hides the home folder before re-allowing the workspace inside it (later rules win)', () => {
    const { profile, params } = buildSeatbeltProfile(options({ sandbox: seatbelt, tmpDir }));
    const hideKey = Object.keys(params).find(
      (key) => key.startsWith('HIDE_') && params[key]?.endsWith('home'),
    );
    const writeKey = Object.keys(params).find(
      (key) => key.startsWith('WRITE_') && params[key]?.endsWith('app'),
    );
    expect(hideKey).toBeDefined();
    expect(profile.indexOf(`(deny file-read* file-write* (subpath (param "${hideKey}")))`)).toBeLessThan(
      profile.indexOf(`(allow file-read* file-write* (subpath (param "${writeKey}")))`),
    );
    expect(profile).toMatch(/\(allow file-read\* \(subpath \(param "EXPOSE_\d+"\)\)\)/);
  });

  it('passes paths only as parameters, so a path with quotes cannot change the profile', () => {
    const odd = path.join(root, 'we"ird) (allow default');
    const { profile, params } = buildSeatbeltProfile(options({ sandbox: seatbelt, tmpDir, workspace: odd }));
    expect(profile).not.toContain('we"ird');
    expect(Object.values(params)).toContain(odd);
  });

  it('allows only the proxy loopback port when an allowlist is set', () => {
    const { profile } = buildSeatbeltProfile(
      options({
        sandbox: seatbelt,
        tmpDir,
        network: { allow: ['registry.npmjs.org'] },
        proxy: { port: 41234 },
      }),
    );
    expect(profile).toContain('(allow network-outbound (remote ip "localhost:41234"))');
    const { argv, env } = wrapCommand(
      options({ sandbox: seatbelt, tmpDir, network: { allow: ['x.org'] }, proxy: { port: 41234 } }),
    );
    expect(argv.slice(0, 2)).toEqual(['/usr/bin/sandbox-exec', '-p']);
    expect(argv).toContain('-D');
    expect(argv.slice(-3)).toEqual(['bash', '-c', 'make test']);
    expect(env.HTTP_PROXY).toBe('http://127.0.0.1:41234');
    expect(env.HOME).toBe(path.join(tmpDir, 'home'));
  });
});
