import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfinedFileError,
  PathEscapeError,
  isInsideWorkspace,
  readFileConfined,
  readFileConfinedSync,
  resolveInWorkspace,
  streamToFileConfined,
  writeFileConfined,
  writeSymlinkConfined,
} from '../../../main/sandbox/paths.js';
import type { Pinning } from '../../../main/sandbox/paths.js';
import { OUTSIDE_SECRET, createFixture } from './pathsFixture.js';
import type { Fixture } from './pathsFixture.js';

const MB = 1024 * 1024;
const fixtures: Fixture[] = [];
const cleanups: (() => void)[] = [];

function fixture(wsName?: string): Fixture {
  const created = createFixture(wsName);
  fixtures.push(created);
  return created;
}

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  for (const created of fixtures.splice(0)) created.cleanup();
});

function resolve(f: Fixture, arg: string, forWrite = false): string {
  return resolveInWorkspace(f.ws, arg, { argName: 'path', forWrite });
}

function read(f: Fixture, arg: string, pinning: Pinning, maxBytes = MB) {
  return readFileConfined(f.ws, arg, { argName: 'path', maxBytes, pinning });
}

function write(
  f: Fixture,
  arg: string,
  pinning: Pinning,
  extra: Partial<Parameters<typeof writeFileConfined>[3]> = {},
) {
  return writeFileConfined(f.ws, arg, 'PAYLOAD', { argName: 'path', pinning, fsync: false, ...extra });
}

function mkfifo(target: string): void {
  const result = spawnSync('mkfifo', [target]);
  if (result.status !== 0) throw new Error(`mkfifo failed: ${String(result.stderr)}`);
}

/**
 * If an implementation wrongly blocks on a FIFO, a helper opens the other end after 3 s so the test
 * fails on its duration instead of hanging the worker forever.
 */
function unblockFifoLater(fifo: string): void {
  const child = spawn('sh', ['-c', 'sleep 3; exec 3<>"$0"; sleep 1', fifo], { stdio: 'ignore' });
  cleanups.push(() => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  });
}

function listen(socketPath: string): Promise<void> {
  const server = net.createServer();
  cleanups.push(() => server.close());
  return new Promise((resolvePromise) => server.listen(socketPath, resolvePromise));
}

function canMknod(): boolean {
  const probe = fixture();
  return spawnSync('mknod', [path.join(probe.ws, 'probe'), 'c', '1', '5']).status === 0;
}

interface BadCase {
  name: string;
  wsName?: string;
  setup?: (f: Fixture) => void | Promise<void>;
  run: (f: Fixture, pinning: Pinning) => unknown;
  code: string;
  /** Reads or writes files: run under both pinning strategies. */
  fileOp?: boolean;
  skip?: () => string | false;
  after?: (f: Fixture) => void;
}

const NFC_NAME = 'caf\u00e9';
const NFD_NAME = 'cafe\u0301';

/** Arguments resolveInWorkspace refuses by themselves, whatever the workspace holds: [name, argument, code]. */
const refusedArguments: [name: string, arg: string, code: string][] = [
  // Lexical escapes.
  ['relative .. out of the workspace', '../outside/secret.txt', 'escape'],
  ['many .. up to /etc/passwd', '../../../../../../../../../etc/passwd', 'escape'],
  ['absolute path outside (/etc/passwd)', '/etc/passwd', 'escape'],
  ['prefix sibling ../ws-evil, relative', '../ws-evil/file.txt', 'escape'],
  ['down then further up: sub/../../outside', 'sub/../../outside/secret.txt', 'escape'],
  ['through a missing folder: nope/../../outside', 'nope/../../outside/x', 'escape'],
  // Malformed arguments.
  ['NUL byte in the middle', 'a\0b.txt', 'nul_byte'],
  ['NUL byte truncation trick', 'notes.txt\0../../outside/secret.txt', 'nul_byte'],
  ['~/.ssh/id_rsa is not the home folder', '~/.ssh/id_rsa', 'home'],
  ['~ alone', '~', 'home'],
  ['~root/.bashrc', '~root/.bashrc', 'home'],
  ['empty path', '', 'empty'],
  ['newline in a name', 'a\nb', 'control_char'],
  ['terminal escape sequence in a name', 'a\u001b[31mb', 'control_char'],
  ['path of 5000 characters', 'a/'.repeat(2500), 'too_long'],
  ['component of 300 characters', 'x'.repeat(300), 'too_long'],
];

/** Protected paths a write without an approval is refused, in a workspace that holds nothing: [name, argument]. */
const protectedWrites: [name: string, arg: string][] = [
  ['.GIT/config (case variant)', '.GIT/config'],
  ['submodule sub/.git/config', 'sub/.git/config'],
  ['.vscode/tasks.json', '.vscode/tasks.json'],
  ['.keel/settings.json', '.keel/settings.json'],
];

const badCases: BadCase[] = [
  ...refusedArguments.map(([name, arg, code]): BadCase => ({ name, run: (f) => resolve(f, arg), code })),
  ...protectedWrites.map(([name, arg]): BadCase => ({
    name,
    run: (f, p) => write(f, arg, p),
    code: 'protected',
    fileOp: true,
  })),
  // Lexical escapes that name the fixture's folders.
  {
    name: 'absolute path to a sibling folder',
    run: (f) => resolve(f, path.join(f.outside, 'secret.txt')),
    code: 'escape',
  },
  {
    name: 'prefix sibling /ws-evil, absolute',
    run: (f) => resolve(f, path.join(f.evil, 'file.txt')),
    code: 'escape',
  },
  {
    name: 'write via .. to a new file outside',
    run: (f, pinning) => write(f, '../outside/new.txt', pinning),
    code: 'escape',
    fileOp: true,
    after: (f) => expect(fs.existsSync(path.join(f.outside, 'new.txt'))).toBe(false),
  },
  { name: 'NUL byte on write', run: (f, p) => write(f, 'x\0', p), code: 'nul_byte', fileOp: true },
  // Symbolic links.
  {
    name: 'symlink to a folder outside',
    setup: (f) => fs.symlinkSync(f.outside, path.join(f.ws, 'out')),
    run: (f, p) => read(f, 'out/secret.txt', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'symlink to a file outside, read',
    setup: (f) => fs.symlinkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'leak')),
    run: (f, p) => read(f, 'leak', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'symlink to a file outside, write',
    setup: (f) => fs.symlinkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'leak')),
    run: (f, p) => write(f, 'leak', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'symlink chain a -> b -> c -> outside',
    setup: (f) => {
      fs.symlinkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'c'));
      fs.symlinkSync('c', path.join(f.ws, 'b'));
      fs.symlinkSync('b', path.join(f.ws, 'a'));
    },
    run: (f, p) => read(f, 'a', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'symlink loop a -> b -> a',
    setup: (f) => {
      fs.symlinkSync('b', path.join(f.ws, 'a'));
      fs.symlinkSync('a', path.join(f.ws, 'b'));
    },
    run: (f) => resolve(f, 'a/x'),
    code: 'symlink_loop',
  },
  {
    name: 'symlink pointing at itself',
    setup: (f) => fs.symlinkSync('self', path.join(f.ws, 'self')),
    run: (f, p) => write(f, 'self', p),
    code: 'symlink_loop',
    fileOp: true,
  },
  {
    name: 'dangling absolute symlink to a new file outside, write',
    setup: (f) => fs.symlinkSync(path.join(f.outside, 'created.txt'), path.join(f.ws, 'dangle')),
    run: (f, p) => write(f, 'dangle', p),
    code: 'escape',
    fileOp: true,
    after: (f) => expect(fs.existsSync(path.join(f.outside, 'created.txt'))).toBe(false),
  },
  {
    name: 'dangling relative symlink ../outside/new, write',
    setup: (f) => fs.symlinkSync('../outside/created.txt', path.join(f.ws, 'dangle')),
    run: (f, p) => write(f, 'dangle', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'dangling symlink to a missing folder outside, write with parents',
    setup: (f) => fs.symlinkSync(path.join(f.outside, 'newdir'), path.join(f.ws, 'dangle')),
    run: (f, p) => write(f, 'dangle/deeper/file.txt', p),
    code: 'escape',
    fileOp: true,
    after: (f) => expect(fs.existsSync(path.join(f.outside, 'newdir'))).toBe(false),
  },
  {
    name: 'symlink whose target climbs with ..',
    setup: (f) => {
      fs.mkdirSync(path.join(f.ws, 'sub'));
      fs.symlinkSync('../../outside', path.join(f.ws, 'sub', 'up'));
    },
    run: (f) => resolve(f, 'sub/up/secret.txt'),
    code: 'escape',
  },
  {
    name: '.. after a symlink follows the link (kernel semantics)',
    setup: (f) => fs.symlinkSync(path.join(f.outside, 'dir'), path.join(f.ws, 'deep')),
    run: (f) => resolve(f, 'deep/../secret.txt'),
    code: 'escape',
  },
  {
    name: 'symlink to /',
    setup: (f) => fs.symlinkSync('/', path.join(f.ws, 'rootlink')),
    run: (f) => resolve(f, 'rootlink/etc/passwd'),
    code: 'escape',
  },
  {
    name: 'symlink to /proc/self/root',
    setup: (f) => fs.symlinkSync('/proc/self/root', path.join(f.ws, 'procroot')),
    run: (f) => resolve(f, 'procroot/etc/passwd'),
    code: 'escape',
  },
  {
    name: 'parent folder is a symlink outside, write creates nothing there',
    setup: (f) => fs.symlinkSync(f.outside, path.join(f.ws, 'out')),
    run: (f, p) => write(f, 'out/newdir/file.txt', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'symbolic link written into a folder that is a link outside',
    setup: (f) => fs.symlinkSync(f.outside, path.join(f.ws, 'out')),
    run: (f, pinning) => writeSymlinkConfined(f.ws, 'out/link', 'anything', { argName: 'path', pinning }),
    code: 'escape',
    fileOp: true,
  },
  {
    // Staging once wrote streams by temp file + rename by path: a parent swapped for a link meanwhile
    // moved the bytes outside (test/main/core/persistent/streamWrite.race.test.ts runs the race itself).
    name: 'parent folder swapped for a link outside while a stream is written',
    setup: (f) => {
      fs.mkdirSync(path.join(f.ws, 'up'));
      fs.writeFileSync(path.join(f.ws, 'up', 'target'), 'inside');
    },
    run: (f, pinning) => {
      async function* swapsItsFolder(): AsyncGenerator<string> {
        yield 'PAYLOAD-1';
        await new Promise((resolve) => setImmediate(resolve));
        fs.renameSync(path.join(f.ws, 'up'), path.join(f.ws, 'up.real'));
        fs.symlinkSync(path.join(f.outside, 'dir'), path.join(f.ws, 'up'));
        yield 'PAYLOAD-2';
      }
      return streamToFileConfined(f.ws, 'up/target', swapsItsFolder(), { argName: 'path', pinning });
    },
    code: 'changed',
    fileOp: true,
    after: (f) => {
      expect(fs.readFileSync(path.join(f.ws, 'up.real', 'target'), 'utf8')).toBe('inside');
      expect(fs.readdirSync(path.join(f.ws, 'up.real'))).toEqual(['target']);
    },
  },
  // Case and Unicode normalization (Linux is case-sensitive and does not normalize: these are siblings).
  {
    name: 'sibling differing only in case (PROJ vs proj)',
    wsName: 'proj',
    setup: (f) => {
      fs.mkdirSync(path.join(f.base, 'PROJ'));
      fs.writeFileSync(path.join(f.base, 'PROJ', 'secret.txt'), OUTSIDE_SECRET);
      fs.symlinkSync(path.join(f.base, 'PROJ'), path.join(f.ws, 'upper'));
    },
    run: (f, p) => read(f, 'upper/secret.txt', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'absolute path to the case sibling',
    wsName: 'proj',
    setup: (f) => fs.mkdirSync(path.join(f.base, 'PROJ')),
    run: (f) => resolve(f, path.join(f.base, 'PROJ', 'x.txt')),
    code: 'escape',
  },
  {
    name: 'sibling differing only in Unicode normalization (NFD vs NFC)',
    wsName: NFC_NAME,
    setup: (f) => {
      fs.mkdirSync(path.join(f.base, NFD_NAME));
      fs.writeFileSync(path.join(f.base, NFD_NAME, 'secret.txt'), OUTSIDE_SECRET);
    },
    run: (f, p) => write(f, path.join(f.base, NFD_NAME, 'secret.txt'), p),
    code: 'escape',
    fileOp: true,
  },
  // Wrong kinds of targets.
  {
    name: 'write to the workspace root itself',
    run: (f, p) => write(f, '.', p),
    code: 'is_directory',
    fileOp: true,
  },
  {
    name: 'write over an existing folder',
    setup: (f) => fs.mkdirSync(path.join(f.ws, 'folder')),
    run: (f, p) => write(f, 'folder', p),
    code: 'is_directory',
    fileOp: true,
  },
  {
    name: 'write through a file used as a folder',
    setup: (f) => fs.writeFileSync(path.join(f.ws, 'file.txt'), 'x'),
    run: (f, p) => write(f, 'file.txt/child', p),
    code: 'not_directory',
    fileOp: true,
  },
  {
    name: 'exclusive create over an existing file',
    setup: (f) => fs.writeFileSync(path.join(f.ws, 'file.txt'), 'keep'),
    run: (f, p) => write(f, 'file.txt', p, { exclusive: true }),
    code: 'exists',
    fileOp: true,
    after: (f) => expect(fs.readFileSync(path.join(f.ws, 'file.txt'), 'utf8')).toBe('keep'),
  },
  {
    name: 'read a missing file',
    run: (f, p) => read(f, 'missing.txt', p),
    code: 'not_found',
    fileOp: true,
  },
  // Hard links.
  {
    name: 'hard link to a file outside, atomic write',
    setup: (f) => fs.linkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'hl')),
    run: (f, p) => write(f, 'hl', p),
    code: 'hard_linked',
    fileOp: true,
  },
  {
    name: 'hard link to a file outside, in-place write',
    setup: (f) => fs.linkSync(path.join(f.outside, 'secret.txt'), path.join(f.ws, 'hl')),
    run: (f, p) => write(f, 'hl', p, { atomic: false }),
    code: 'hard_linked',
    fileOp: true,
  },
  {
    name: 'hard link inside the workspace',
    setup: (f) => {
      fs.writeFileSync(path.join(f.ws, 'a.txt'), 'shared');
      fs.linkSync(path.join(f.ws, 'a.txt'), path.join(f.ws, 'b.txt'));
    },
    run: (f, p) => write(f, 'b.txt', p),
    code: 'hard_linked',
    fileOp: true,
    after: (f) => expect(fs.readFileSync(path.join(f.ws, 'a.txt'), 'utf8')).toBe('shared'),
  },
  // Special files: refused without blocking.
  {
    name: 'FIFO, read',
    setup: (f) => {
      mkfifo(path.join(f.ws, 'pipe'));
      unblockFifoLater(path.join(f.ws, 'pipe'));
    },
    run: (f, p) => read(f, 'pipe', p),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'FIFO, atomic write',
    setup: (f) => {
      mkfifo(path.join(f.ws, 'pipe'));
      unblockFifoLater(path.join(f.ws, 'pipe'));
    },
    run: (f, p) => write(f, 'pipe', p),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'FIFO, in-place write',
    setup: (f) => {
      mkfifo(path.join(f.ws, 'pipe'));
      unblockFifoLater(path.join(f.ws, 'pipe'));
    },
    run: (f, p) => write(f, 'pipe', p, { atomic: false }),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'FIFO named .env read synchronously',
    setup: (f) => {
      mkfifo(path.join(f.ws, '.env'));
      unblockFifoLater(path.join(f.ws, '.env'));
    },
    run: (f, pinning) => readFileConfinedSync(f.ws, '.env', { argName: 'path', maxBytes: MB, pinning }),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'character device (a /dev/zero made with mknod) inside the workspace',
    skip: () => (canMknod() ? false : 'mknod is not permitted here'),
    setup: (f) => {
      spawnSync('mknod', [path.join(f.ws, 'zero'), 'c', '1', '5']);
    },
    run: (f, p) => read(f, 'zero', p),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'symlink to /dev/zero',
    setup: (f) => fs.symlinkSync('/dev/zero', path.join(f.ws, 'zero')),
    run: (f, p) => read(f, 'zero', p),
    code: 'escape',
    fileOp: true,
  },
  {
    name: 'unix socket, read',
    setup: (f) => listen(path.join(f.ws, 'sock')),
    run: (f, p) => read(f, 'sock', p),
    code: 'not_regular',
    fileOp: true,
  },
  {
    name: 'unix socket, write',
    setup: (f) => listen(path.join(f.ws, 'sock')),
    run: (f, p) => write(f, 'sock', p, { atomic: false }),
    code: 'not_regular',
    fileOp: true,
  },
  // Huge files.
  {
    name: 'sparse 5 GiB file, read',
    setup: (f) => {
      fs.closeSync(fs.openSync(path.join(f.ws, 'huge.bin'), 'w'));
      fs.truncateSync(path.join(f.ws, 'huge.bin'), 5 * 1024 * MB);
    },
    run: (f, p) => read(f, 'huge.bin', p),
    code: 'too_large',
    fileOp: true,
  },
  {
    name: 'one byte over the limit',
    setup: (f) => fs.writeFileSync(path.join(f.ws, 'edge.bin'), Buffer.alloc(1025)),
    run: (f, p) => read(f, 'edge.bin', p, 1024),
    code: 'too_large',
    fileOp: true,
  },
  // Protected paths (writes need an approval).
  {
    name: '.git/hooks/pre-commit',
    setup: (f) => fs.mkdirSync(path.join(f.ws, '.git', 'hooks'), { recursive: true }),
    run: (f, p) => write(f, '.git/hooks/pre-commit', p),
    code: 'protected',
    fileOp: true,
    after: (f) => expect(fs.existsSync(path.join(f.ws, '.git', 'hooks', 'pre-commit'))).toBe(false),
  },
  {
    name: 'symlink into .git/hooks',
    setup: (f) => {
      fs.mkdirSync(path.join(f.ws, '.git', 'hooks'), { recursive: true });
      fs.symlinkSync('.git/hooks', path.join(f.ws, 'hooks'));
    },
    run: (f, p) => write(f, 'hooks/pre-commit', p),
    code: 'protected',
    fileOp: true,
  },
  {
    name: 'user-listed glob secrets/**',
    run: (f, p) => write(f, 'secrets/prod.json', p, { protectedGlobs: ['secrets'] }),
    code: 'protected',
    fileOp: true,
  },
  {
    name: 'folder replaced by a link to .git during the run',
    setup: (f) => {
      fs.mkdirSync(path.join(f.ws, '.git'));
      fs.mkdirSync(path.join(f.ws, 'x'));
      fs.rmdirSync(path.join(f.ws, 'x'));
      fs.symlinkSync('.git', path.join(f.ws, 'x'));
    },
    run: (f, p) => write(f, 'x/config', p),
    code: 'protected',
    fileOp: true,
  },
  {
    name: 'approved path re-pointed before the write',
    setup: (f) => {
      fs.mkdirSync(path.join(f.ws, 'docs'));
      fs.mkdirSync(path.join(f.ws, 'src'));
      fs.symlinkSync('src', path.join(f.ws, 'link'));
    },
    run: (f, p) => write(f, 'link/a.txt', p, { expectedRealPath: path.join(f.ws, 'docs', 'a.txt') }),
    code: 'changed',
    fileOp: true,
  },
];

/** Every bad case once per pinning strategy it runs under (both for file operations): [test title, case, pinning]. */
const badRuns = badCases.flatMap((badCase) =>
  (badCase.fileOp ? (['procfd', 'portable'] as const) : (['procfd'] as const)).map(
    (pinning) => [badCase.fileOp ? `${badCase.name} [${pinning}]` : badCase.name, badCase, pinning] as const,
  ),
);

describe('bad input: paths', () => {
  it.for(badRuns)('refuses: %s', async ([, badCase, pinning], context) => {
    const reason = badCase.skip?.();
    if (reason) {
      context.skip(reason);
      return;
    }
    const f = fixture(badCase.wsName);
    await badCase.setup?.(f);
    const before = f.snapshotOutside();
    const started = performance.now();
    const error: unknown = await new Promise((settle) => settle(badCase.run(f, pinning))).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(Error);
    expect(error instanceof PathEscapeError || error instanceof ConfinedFileError).toBe(true);
    expect(error).toMatchObject({ code: badCase.code, argName: 'path' });
    expect((error as Error).message).toMatch(/^Argument "path" \(/);
    expect(f.snapshotOutside()).toEqual(before);
    badCase.after?.(f);
  });

  it('has at least 40 distinct cases', () => {
    expect(badCases.length).toBeGreaterThanOrEqual(40);
  });
});

describe('resolveInWorkspace', () => {
  it('resolves a relative path to the real absolute path', () => {
    const f = fixture();
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'x');
    expect(resolve(f, 'a.txt')).toBe(path.join(f.ws, 'a.txt'));
    expect(resolve(f, './sub/../a.txt')).toBe(path.join(f.ws, 'a.txt'));
  });

  it('accepts an absolute path inside the workspace', () => {
    const f = fixture();
    expect(resolve(f, path.join(f.ws, 'src', 'new.ts'))).toBe(path.join(f.ws, 'src', 'new.ts'));
  });

  it('resolves a path that does not exist yet under the real path of its deepest existing parent', () => {
    const f = fixture();
    fs.mkdirSync(path.join(f.ws, 'real', 'dir'), { recursive: true });
    fs.symlinkSync('real/dir', path.join(f.ws, 'alias'));
    expect(resolve(f, 'alias/new/deeper.txt')).toBe(path.join(f.ws, 'real', 'dir', 'new', 'deeper.txt'));
  });

  it('follows a symlink that stays inside the workspace', () => {
    const f = fixture();
    fs.mkdirSync(path.join(f.ws, 'packages', 'a'), { recursive: true });
    fs.writeFileSync(path.join(f.ws, 'packages', 'a', 'index.ts'), 'x');
    fs.symlinkSync('../packages/a/index.ts', path.join(f.ws, 'packages', 'entry.ts'));
    fs.symlinkSync(path.join(f.ws, 'packages'), path.join(f.ws, 'pk'));
    expect(resolve(f, 'pk/entry.ts')).toBe(path.join(f.ws, 'packages', 'a', 'index.ts'));
  });

  it('realpaths the root, so a workspace given through a symlink still confines', () => {
    const f = fixture();
    const alias = path.join(f.base, 'alias-of-ws');
    fs.symlinkSync(f.ws, alias);
    expect(resolveInWorkspace(alias, 'a.txt', { argName: 'path' })).toBe(path.join(f.ws, 'a.txt'));
    expect(resolveInWorkspace(alias, path.join(alias, 'a.txt'), { argName: 'path' })).toBe(
      path.join(f.ws, 'a.txt'),
    );
    expect(() => resolveInWorkspace(alias, '../outside/secret.txt', { argName: 'path' })).toThrow(
      PathEscapeError,
    );
  });

  it('allows a file whose name starts with ~ when written as ./~name', () => {
    const f = fixture();
    expect(resolve(f, './~notes.txt')).toBe(path.join(f.ws, '~notes.txt'));
  });

  it('accepts a name in either Unicode normalization inside the workspace, as distinct names on Linux', () => {
    const f = fixture(NFC_NAME);
    expect(resolve(f, NFD_NAME)).toBe(path.join(f.ws, NFD_NAME));
    expect(resolve(f, path.join(f.ws, NFC_NAME))).toBe(path.join(f.ws, NFC_NAME));
  });

  it('names the argument in the error and explains the reason', () => {
    const f = fixture();
    expect(() => resolveInWorkspace(f.ws, '../outside/secret.txt', { argName: 'cwd' })).toThrow(
      /^Argument "cwd" \("\.\.\/outside\/secret\.txt"\): path escapes the workspace/,
    );
    expect(() => resolveInWorkspace(f.ws, 'a\0b', { argName: 'path' })).toThrow(/NUL byte/);
  });

  it('refuses a workspace root that does not exist', () => {
    const f = fixture();
    expect(() => resolveInWorkspace(path.join(f.base, 'missing'), 'a', { argName: 'path' })).toThrow(
      /does not exist/,
    );
  });

  it('isInsideWorkspace agrees with the resolver on siblings and the root itself', () => {
    const f = fixture();
    expect(isInsideWorkspace(f.ws, f.ws)).toBe(true);
    expect(isInsideWorkspace(f.ws, path.join(f.ws, 'x'))).toBe(true);
    expect(isInsideWorkspace(f.ws, f.evil)).toBe(false);
    expect(isInsideWorkspace(f.ws, path.join(f.ws, '..foo'))).toBe(true);
  });
});

describe.each<Pinning>(['procfd', 'portable'])('confined files [%s]', (pinning) => {
  it('creates a new file and its missing parent folders', async () => {
    const f = fixture();
    const result = await writeFileConfined(f.ws, 'src/deep/new.ts', 'export {};\n', {
      argName: 'path',
      pinning,
    });
    expect(result).toEqual({ path: path.join(f.ws, 'src', 'deep', 'new.ts'), bytes: 11, created: true });
    expect(fs.readFileSync(result.path, 'utf8')).toBe('export {};\n');
  });

  it('replaces an existing file atomically, keeps its mode, and leaves no temp file behind', async () => {
    const f = fixture();
    const file = path.join(f.ws, 'run.sh');
    fs.writeFileSync(file, 'old');
    fs.chmodSync(file, 0o751);
    const result = await writeFileConfined(f.ws, 'run.sh', 'new', { argName: 'path', pinning });
    expect(result.created).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
    expect(fs.statSync(file).mode & 0o777).toBe(0o751);
    expect(fs.readdirSync(f.ws)).toEqual(['run.sh']);
  });

  it('writes in place when asked, keeping the inode', async () => {
    const f = fixture();
    const file = path.join(f.ws, 'a.txt');
    fs.writeFileSync(file, 'a much longer old content');
    const inode = fs.statSync(file).ino;
    await writeFileConfined(f.ws, 'a.txt', 'short', { argName: 'path', pinning, atomic: false });
    expect(fs.readFileSync(file, 'utf8')).toBe('short');
    expect(fs.statSync(file).ino).toBe(inode);
  });

  it('writes through a symlink that points inside the workspace, to its target', async () => {
    const f = fixture();
    fs.writeFileSync(path.join(f.ws, 'target.txt'), 'old');
    fs.symlinkSync('target.txt', path.join(f.ws, 'alias.txt'));
    await writeFileConfined(f.ws, 'alias.txt', 'new', { argName: 'path', pinning });
    expect(fs.readFileSync(path.join(f.ws, 'target.txt'), 'utf8')).toBe('new');
    expect(fs.lstatSync(path.join(f.ws, 'alias.txt')).isSymbolicLink()).toBe(true);
  });

  it('creates exclusively when the file does not exist', async () => {
    const f = fixture();
    await writeFileConfined(f.ws, 'once.txt', 'x', { argName: 'path', pinning, exclusive: true });
    expect(fs.readFileSync(path.join(f.ws, 'once.txt'), 'utf8')).toBe('x');
    expect(fs.readdirSync(f.ws)).toEqual(['once.txt']);
  });

  it('writes a protected path once the caller holds an approval', async () => {
    const f = fixture();
    await writeFileConfined(f.ws, '.vscode/settings.json', '{}', {
      argName: 'path',
      pinning,
      allowProtected: true,
    });
    expect(fs.readFileSync(path.join(f.ws, '.vscode', 'settings.json'), 'utf8')).toBe('{}');
  });

  it('reads a file, and cuts a large one at maxBytes when truncation is asked for', async () => {
    const f = fixture();
    fs.writeFileSync(path.join(f.ws, 'a.txt'), 'hello world');
    const whole = await readFileConfined(f.ws, 'a.txt', { argName: 'path', maxBytes: 11, pinning });
    expect(whole).toMatchObject({ size: 11, truncated: false });
    expect(whole.data.toString()).toBe('hello world');
    const cut = readFileConfinedSync(f.ws, 'a.txt', {
      argName: 'path',
      maxBytes: 5,
      truncate: true,
      pinning,
    });
    expect(cut).toMatchObject({ size: 11, truncated: true });
    expect(cut.data.toString()).toBe('hello');
  });

  it('reads the first bytes of a sparse 5 GiB file quickly with truncation', async () => {
    const f = fixture();
    const huge = path.join(f.ws, 'huge.bin');
    fs.closeSync(fs.openSync(huge, 'w'));
    fs.truncateSync(huge, 5 * 1024 * MB);
    const started = performance.now();
    const result = await readFileConfined(f.ws, 'huge.bin', {
      argName: 'path',
      maxBytes: MB,
      truncate: true,
      pinning,
    });
    expect(result.data.length).toBe(MB);
    expect(result.truncated).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
