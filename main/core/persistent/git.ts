import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Settings every git call of the checkout engine runs with, whatever the user's configuration says: no
 * hooks (a checkout must not run the project's code in Keel's process), no line-ending or fsmonitor
 * magic (checkout bytes must equal backing bytes), no automatic gc, a fixed identity for snapshot commits,
 * parallel checkout for big file writes.
 */
const FIXED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.fsmonitor=false',
  'core.quotePath=false',
  'core.symlinks=true',
  'gc.auto=0',
  'maintenance.auto=false',
  'advice.detachedHead=false',
  'commit.gpgSign=false',
  'user.name=Keel',
  'user.email=keel@localhost',
  // Writing thousands of files (a first checkout, a big reset) waits on the disk far more than on the
  // CPU: a few workers overlap those waits (measured 2-3x faster on a busy disk). Small updates stay serial.
  'checkout.workers=4',
];

/** Where one git call runs: a folder and the variables that pick its git dir, work tree and index. */
export type GitSide = {
  cwd: string;
  /** GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE for the shadow and private-index views; empty for a plain repo. */
  env: Readonly<Record<string, string>>;
  /** Extra `-c name=value` settings (the checkout's exclude file). */
  config?: readonly string[];
};

/** A git command failed; the message names the command and git's own words. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(
      `git ${args.slice(0, 3).join(' ')} failed (exit ${code ?? 'signal'}): ${stderr.trim().slice(0, 500)}`,
    );
    this.name = 'GitError';
  }
}

/** The environment of git children: the parent's, minus every GIT_* variable that could redirect it. */
function gitEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) env[name] = value;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    LC_ALL: 'C',
    ...extra,
  };
}

let started = 0;

/** How many git processes the checkout engine has started in this process (for benchmarks and tests). */
export function gitProcessCount(): number {
  return started;
}

/** The arguments of one git process (the fixed settings first); counts the process. */
function argv(side: GitSide, args: readonly string[]): string[] {
  started += 1;
  const config = [...FIXED_CONFIG, ...(side.config ?? [])].flatMap((c) => ['-c', c]);
  return [...config, ...args];
}

/** Options of `runGit`. */
export type RunGitOptions = {
  input?: string | Buffer;
  /** Exit codes that are answers, not failures (merge-file's conflict count, diff --quiet). */
  okCodes?: readonly number[];
};

/** Runs git to completion; resolves with stdout and the exit code, throws GitError on any other exit. */
export function runGit(
  side: GitSide,
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<{ stdout: Buffer; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', argv(side, args), {
      cwd: side.cwd,
      env: gitEnv(side.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => reject(new GitError(args, null, `cannot start git: ${error.message}`)));
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0 || (code !== null && options.okCodes?.includes(code))) {
        resolve({ stdout: Buffer.concat(out), code: code ?? 0 });
      } else {
        reject(new GitError(args, code, stderr));
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Runs git and returns stdout as trimmed text. */
export async function gitText(
  side: GitSide,
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<string> {
  const { stdout } = await runGit(side, args, options);
  return stdout.toString('utf8').trim();
}

/**
 * Streams one blob's bytes (`git cat-file blob <oid>`), so a big file never sits in memory. The stream
 * errors with a GitError when git fails.
 */
export function streamBlob(side: GitSide, oid: string): Readable {
  const child = spawn('git', argv(side, ['cat-file', 'blob', oid]), {
    cwd: side.cwd,
    env: gitEnv(side.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const err: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.on('close', (code) => {
    if (code !== 0)
      child.stdout.destroy(new GitError(['cat-file', 'blob', oid], code, Buffer.concat(err).toString()));
  });
  return child.stdout;
}

/** One entry of `git diff-tree -r --raw -z`: what happened to one path between two trees. */
export type TreeChange = {
  path: string;
  /** A added, D deleted, M modified, T type changed (file ↔ link). */
  status: 'A' | 'D' | 'M' | 'T';
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
};

const ZERO_OID = /^0+$/;

/** True for git's all-zero object id (the side where a path does not exist). */
export function isZeroOid(oid: string): boolean {
  return ZERO_OID.test(oid);
}

/** The paths that differ between two trees, with both sides' modes and blob ids (renames off). */
export async function diffTrees(side: GitSide, from: string, to: string): Promise<TreeChange[]> {
  if (from === to) return [];
  const { stdout } = await runGit(side, ['diff-tree', '-r', '-z', '--raw', '--no-renames', from, to]);
  return parseRawDiff(stdout, stdout.length);
}

/**
 * One `git diff-tree` for both answers a commit needs: the changed paths (`changes`, resolved as soon as
 * git has listed them, before the patch is written) and the binary-safe patch streamed into `file`
 * (`written`). Renames off. Both promises reject with a GitError when git fails.
 */
export function diffTreesWithPatch(
  side: GitSide,
  from: string,
  to: string,
  file: string,
): { changes: Promise<TreeChange[]>; written: Promise<void> } {
  const args = ['diff-tree', '-r', '-z', '--raw', '-p', '--binary', '--no-renames', from, to];
  let listed!: (changes: TreeChange[]) => void;
  let failed!: (error: unknown) => void;
  const changes = new Promise<TreeChange[]>((resolve, reject) => {
    listed = resolve;
    failed = reject;
  });
  changes.catch(() => undefined);
  const written = (async () => {
    const child = spawn('git', argv(side, args), {
      cwd: side.cwd,
      env: gitEnv(side.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const err: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', resolve);
    });
    // The raw listing comes first and ends with an empty record; everything after it is the patch.
    let head: Buffer = Buffer.alloc(0);
    let scanned = 0;
    let parsed = false;
    async function* patchBytes(): AsyncGenerator<Buffer> {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        if (parsed) {
          yield chunk;
          continue;
        }
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        const end = rawListingEnd(head, scanned);
        scanned = end.scanned;
        if (end.at === undefined) continue;
        parsed = true;
        listed(parseRawDiff(head, end.at));
        if (end.at + 1 < head.length) yield head.subarray(end.at + 1);
      }
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      await pipeline(patchBytes, fs.createWriteStream(file));
    } catch (error) {
      child.kill();
      failed(error);
      throw error;
    }
    const code = await exited;
    if (code !== 0) {
      const error = new GitError(args, code, Buffer.concat(err).toString('utf8'));
      failed(error);
      throw error;
    }
    // Identical trees print nothing at all.
    if (!parsed) listed(parseRawDiff(head, head.length));
  })();
  return { changes, written };
}

/**
 * Where the raw part of `diff-tree -z --raw -p` output ends (the NUL of its empty closing record), scanning
 * whole `meta NUL path NUL` records from `from`; `scanned` is where the next call resumes.
 */
function rawListingEnd(buffer: Buffer, from: number): { at: number | undefined; scanned: number } {
  let at = from;
  for (;;) {
    if (at >= buffer.length) return { at: undefined, scanned: at };
    if (buffer[at] === 0) return { at, scanned: at };
    const metaEnd = buffer.indexOf(0, at);
    const pathEnd = metaEnd < 0 ? -1 : buffer.indexOf(0, metaEnd + 1);
    if (pathEnd < 0) return { at: undefined, scanned: at };
    at = pathEnd + 1;
  }
}

/** Parses `diff-tree -r -z --raw` records in `buffer` up to `end`. */
function parseRawDiff(buffer: Buffer, end: number): TreeChange[] {
  const parts = buffer.subarray(0, end).toString('utf8').split('\0');
  const changes: TreeChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i] as string;
    const path = parts[i + 1] as string;
    const [oldMode, newMode, oldOid, newOid, status] = meta.replace(/^:/, '').split(' ');
    if (!oldMode || !newMode || !oldOid || !newOid || !status) continue;
    const kind = status[0] as TreeChange['status'];
    if (kind !== 'A' && kind !== 'D' && kind !== 'M' && kind !== 'T') continue;
    changes.push({ path, status: kind, oldMode, newMode, oldOid, newOid });
  }
  return changes;
}

/** `git ls-files` style NUL-separated output as a list (empty entries dropped). */
export function splitNul(output: Buffer): string[] {
  return output
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry !== '');
}
