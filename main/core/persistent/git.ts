import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { helperReady, helperUsable, runInHelper, startHelper } from './gitHelper.js';

/**
 * Settings every git call Keel makes runs with, whatever the repository's or the user's configuration says:
 * nothing a config names is executed (no hooks, no fsmonitor, no ssh or credential helper, no transport but
 * local files, no submodule recursion: a git Keel runs must never run the project's code in Keel's process),
 * no line-ending magic (checkout bytes must equal backing bytes), no automatic gc, a fixed identity for
 * snapshot commits, parallel checkout for big file writes. `-c` settings reach the gits git itself starts.
 */
const FIXED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.sshCommand=false',
  'credential.helper=',
  'protocol.allow=never',
  'protocol.file.allow=always',
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
  'submodule.recurse=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
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
  /**
   * Issue #36: the pid of a copy-on-write view's holder (main/sandbox/overlayView.ts): git runs in its namespaces,
   * where `cwd` is the merged view (in Keel's own, the mount point is an empty folder git would read instead).
   */
  inView?: number;
};

/** The program, argv and folder that start `program` for `side`: directly, or entered into its view's namespaces. */
function startOf(
  side: GitSide,
  program: string,
  args: readonly string[],
): { file: string; args: string[]; cwd: string } {
  if (side.inView === undefined) return { file: program, args: [...args], cwd: side.cwd };
  const enter = [`--target=${side.inView}`, '--user', '--mount', '--preserve-credentials'];
  // The folder is entered by a shell inside the namespace: nsenter's `--wd` opened it before entering, so a git that
  // does not change into its work tree itself (hash-object) read the empty mount point of Keel's namespace.
  return {
    file: 'nsenter',
    args: [...enter, '--', '/bin/sh', '-c', 'cd -- "$0" && exec "$@"', side.cwd, program, ...args],
    cwd: '/',
  };
}

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

/**
 * The environment of git children: the parent's, minus every GIT_* variable (none from the workspace or the
 * user's shell redirects git: GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_*, GIT_EXEC_PATH...) and the askpass
 * helpers; no system config or attributes, no replace refs, no prompt. The user's global config stays
 * (it lies outside every box, and LFS and the like live there); `side.env` is Keel's own GIT_DIR and index.
 */
function gitEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('GIT_') && name !== 'SSH_ASKPASS') env[name] = value;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

let started = 0;

/**
 * How many processes the checkout engine has started in this process: a git, or one `sh` running a fixed
 * batch of gits (for benchmarks and tests). Each start forks Keel's process, whose cost grows with its
 * memory (~15 ms at 300 MB RSS), so it is the number to keep low.
 */
export function gitProcessCount(): number {
  return started;
}

/** The `-c name=value` pairs every git call carries. */
function configArgs(side: GitSide): string[] {
  return [...FIXED_CONFIG, ...(side.config ?? [])].flatMap((c) => ['-c', c]);
}

/**
 * Starts one git with the fixed settings and environment: the only place Keel starts git directly (the
 * `sh` batches below pass the same settings to theirs). Counts the process.
 */
function spawnGit(
  side: GitSide,
  args: readonly string[],
  options: { timeoutMs?: number } = {},
): ChildProcessWithoutNullStreams {
  started += 1;
  const argv = [...configArgs(side), ...args];
  const common = {
    env: gitEnv(side.env),
    stdio: ['pipe', 'pipe', 'pipe'] as ['pipe', 'pipe', 'pipe'],
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  };
  if (side.inView === undefined) return spawn('git', argv, { cwd: side.cwd, ...common });
  const start = startOf(side, 'git', argv);
  return spawn(start.file, start.args, { cwd: start.cwd, ...common });
}

/**
 * Starts `/bin/sh` on a fixed script whose git calls read as `git "$@" ...`: the positional parameters are
 * the fixed settings, so every git in the batch runs with them. `vars` (named KEEL_*) carry the values.
 * Keel's process forks once; the shell, a small process, forks the gits.
 */
function spawnGitScript(
  side: GitSide,
  script: string,
  vars: Readonly<Record<string, string>>,
): ChildProcessWithoutNullStreams {
  started += 1;
  const start = startOf(side, '/bin/sh', ['-c', script, 'keel-git', ...configArgs(side)]);
  return spawn(start.file, start.args, {
    cwd: start.cwd,
    env: { ...gitEnv(side.env), ...vars },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Options of `runGit`. */
export type RunGitOptions = {
  input?: string | Buffer;
  /** Exit codes that are answers, not failures (merge-file's conflict count, diff --quiet). */
  okCodes?: readonly number[];
  /** Kills git after this many milliseconds (a GitError with no exit code); default: no limit. */
  timeoutMs?: number;
};

/**
 * Runs git to completion; resolves with stdout and the exit code, throws GitError on any other exit. The git
 * is started by the helper process (gitHelper.ts: no fork of Keel's large process), with the same settings,
 * environment and folder spawnGit gives it, and counted the same.
 */
export async function runGit(
  side: GitSide,
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<{ stdout: Buffer; stderr: Buffer; code: number }> {
  if (!helperUsable()) return runGitDirect(side, args, options);
  if (!helperReady()) {
    // Its first calls do not wait for the helper's boot: they start git themselves, and the helper boots
    // after the first one (not competing with it for a core).
    try {
      return await runGitDirect(side, args, options);
    } finally {
      setImmediate(startHelper);
    }
  }
  started += 1;
  const result = await runInHelper({
    ...startOf(side, 'git', [...configArgs(side), ...args]),
    env: gitEnv(side.env),
    input: options.input ?? '',
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  if ('startError' in result) throw new GitError(args, null, `cannot start git: ${result.startError}`);
  const { code } = result;
  if (code === 0 || (code !== null && options.okCodes?.includes(code)))
    return { stdout: result.stdout, stderr: result.stderr, code };
  throw new GitError(args, code, result.stderr.toString('utf8'));
}

/** runGit's git started by Keel's own process: where no helper can run (the app's Electron main process). */
function runGitDirect(
  side: GitSide,
  args: readonly string[],
  options: RunGitOptions,
): Promise<{ stdout: Buffer; stderr: Buffer; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(
      side,
      args,
      options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => reject(new GitError(args, null, `cannot start git: ${error.message}`)));
    child.on('close', (code) => {
      const stderr = Buffer.concat(err);
      if (code === 0 || (code !== null && options.okCodes?.includes(code))) {
        resolve({ stdout: Buffer.concat(out), stderr, code: code ?? 0 });
      } else {
        reject(new GitError(args, code, stderr.toString('utf8')));
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
  const child = spawnGit(side, ['cat-file', 'blob', oid]);
  child.stdin.on('error', () => undefined);
  child.stdin.end();
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
 * The batch after a commit's `git status`: stage the paths it named (`update-index`), write the index's
 * tree, and when that differs from `from` (and a message is given), a commit of it on `parent` and one
 * `diff-tree --raw -p` from `from`: its listing first, then the binary-safe patch. First output line:
 * `<tree>` or `<tree> <commit>`.
 */
const STAGE_COMMIT_DIFF = `set -e
if [ -n "$KEEL_TREE" ]; then
  tree=$KEEL_TREE
else
  if [ -n "$KEEL_STAGE" ]; then git "$@" update-index --add --remove --replace -z --stdin; fi
  tree=$(git "$@" write-tree)
fi
if [ -z "$KEEL_MESSAGE" ] || [ "$tree" = "$KEEL_FROM" ]; then
  printf '%s\\n' "$tree"
  exit 0
fi
if [ -n "$KEEL_PARENT" ]; then
  commit=$(git "$@" commit-tree "$tree" -p "$KEEL_PARENT" -m "$KEEL_MESSAGE")
else
  commit=$(git "$@" commit-tree "$tree" -m "$KEEL_MESSAGE")
fi
printf '%s %s\\n' "$tree" "$commit"
exec git "$@" diff-tree -r -z --raw -p --binary --no-renames "$KEEL_FROM" "$tree"
`;

/** What `stageCommitAndDiff` answers, each as soon as git has printed it. */
export type StagedCommit = {
  /** The index's tree after staging. */
  tree: Promise<string>;
  /** The commit of that tree; undefined when it equals `from` or no message was given (nothing after). */
  commit: Promise<string | undefined>;
  /** The paths that differ from `from`, with both sides' modes and blob ids (renames off). */
  changes: Promise<TreeChange[]>;
  /** The patch from `from` streamed into `patchFile` (no file when there is no commit). */
  written: Promise<void>;
};

/** Options of `stageCommitAndDiff`. */
export type StageCommitOptions = {
  /** Paths to stage (added, modified or removed as the work tree has them); none skips `update-index`. */
  paths: readonly string[];
  /** The session's tree, already written (viewTree.ts): nothing is staged, no `write-tree`. */
  tree?: string;
  /** The tree the change is measured from. */
  from: string;
  /** Message of the commit; without one only the tree is written. */
  message?: string;
  /** Parent of the commit ('' for none). */
  parent?: string;
  /** Where the patch goes. */
  patchFile?: string;
};

/**
 * One process for a commit's git work after `git status` (see STAGE_COMMIT_DIFF): four gits would be four
 * forks of Keel's process, the batch is one. Every promise rejects with a GitError when a git fails.
 */
export function stageCommitAndDiff(side: GitSide, options: StageCommitOptions): StagedCommit {
  const label = ['update-index/write-tree/commit-tree/diff-tree'];
  const tree = deferred<string>();
  const commit = deferred<string | undefined>();
  const changes = deferred<TreeChange[]>();
  const fail = (error: unknown) => {
    tree.reject(error);
    commit.reject(error);
    changes.reject(error);
  };
  const written = (async () => {
    const child = spawnGitScript(side, STAGE_COMMIT_DIFF, {
      KEEL_STAGE: options.paths.length > 0 ? '1' : '',
      KEEL_TREE: options.tree ?? '',
      KEEL_FROM: options.from,
      KEEL_MESSAGE: options.message ?? '',
      KEEL_PARENT: options.parent ?? '',
    });
    const err: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', resolve);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.paths.map((p) => `${p}\0`).join(''));
    // Header line, then the raw listing (ended by an empty record), then the patch.
    let head: Buffer = Buffer.alloc(0);
    let listingStart: number | undefined;
    let scanned = 0;
    // Where the reading is (an object: the reader below moves it on, which TypeScript cannot follow).
    const at = { state: 'header' } as { state: 'header' | 'listing' | 'patch' | 'done' };
    const take = (chunk: Buffer): Buffer | undefined => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      if (at.state === 'header') {
        const newline = head.indexOf(10);
        if (newline < 0) return undefined;
        const [treeId = '', commitId] = head.subarray(0, newline).toString('utf8').split(' ');
        tree.resolve(treeId);
        commit.resolve(commitId);
        if (commitId === undefined) {
          changes.resolve([]);
          at.state = 'done';
          return undefined;
        }
        at.state = 'listing';
        listingStart = newline + 1;
        scanned = listingStart;
      }
      const end = rawListingEnd(head, scanned);
      scanned = end.scanned;
      if (end.at === undefined) return undefined;
      changes.resolve(parseRawDiff(head.subarray(listingStart), end.at - (listingStart ?? 0)));
      at.state = 'patch';
      return head.subarray(end.at + 1);
    };
    async function* patchBytes(): AsyncGenerator<Buffer> {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        if (at.state === 'patch') yield chunk;
        else if (at.state !== 'done') {
          const rest = take(chunk);
          if (rest !== undefined && rest.length > 0) yield rest;
        }
      }
    }
    try {
      if (options.patchFile === undefined) {
        for await (const _chunk of patchBytes()) {
          // Nothing to keep: the output is read to its end (git would block on a full pipe).
        }
      } else {
        fs.mkdirSync(path.dirname(options.patchFile), { recursive: true });
        await pipeline(patchBytes, fs.createWriteStream(options.patchFile));
        if (at.state === 'done') fs.rmSync(options.patchFile, { force: true });
      }
    } catch (error) {
      child.kill();
      fail(error);
      throw error;
    }
    const code = await exited;
    if (code !== 0) {
      const error = new GitError(label, code, Buffer.concat(err).toString('utf8'));
      fail(error);
      throw error;
    }
    if (at.state === 'header') {
      const error = new GitError(label, code, 'no tree was printed');
      fail(error);
      throw error;
    }
    if (at.state === 'listing')
      changes.resolve(parseRawDiff(head.subarray(listingStart), head.length - (listingStart ?? 0)));
  })();
  for (const answer of [tree.promise, commit.promise, changes.promise, written])
    answer.catch(() => undefined);
  return { tree: tree.promise, commit: commit.promise, changes: changes.promise, written };
}

/**
 * The rest of a snapshot after `add -A`: the index's tree (unless known: KEEL_TREE); when it is the
 * baseline's, nothing more (first line `<tree>`). Else a commit of it, on the backing HEAD for a worktree
 * (the HEAD itself when its tree is this one) or on the previous baseline: `<tree> <head or -> <commit>`.
 */
const SNAPSHOT_COMMIT = `set -e
tree=$KEEL_TREE
if [ -z "$tree" ]; then tree=$(git "$@" write-tree); fi
if [ -n "$KEEL_BASELINE" ] && [ "$tree" = "$KEEL_BASELINE_TREE" ]; then
  printf '%s\\n' "$tree"
  exit 0
fi
parent=$KEEL_BASELINE
head=-
if [ -n "$KEEL_ON_HEAD" ]; then
  head=$(git "$@" rev-parse --verify HEAD)
  parent=$head
  if [ "$(git "$@" rev-parse --verify "$head^{tree}")" = "$tree" ]; then
    printf '%s %s %s\\n' "$tree" "$head" "$head"
    exit 0
  fi
fi
if [ -n "$parent" ]; then
  commit=$(git "$@" commit-tree "$tree" -p "$parent" -m "$KEEL_MESSAGE")
else
  commit=$(git "$@" commit-tree "$tree" -m "$KEEL_MESSAGE")
fi
printf '%s %s %s\\n' "$tree" "$head" "$commit"
`;

/** Options of `snapshotCommit`. */
export type SnapshotCommitOptions = {
  /** The index's tree when already known (no `write-tree`). */
  tree?: string;
  /** The current baseline commit ('' before the first) and its tree. */
  baseline: string;
  baselineTree: string;
  /** Worktree kind: snapshot commits go on the repository's HEAD. */
  onHead: boolean;
  message: string;
};

/** What `snapshotCommit` found: the tree, the backing HEAD (worktree), and the commit (undefined: the baseline's). */
export type SnapshotCommit = { tree: string; head?: string; commit?: string };

/**
 * Tree and commit of a snapshot after `add -A` in one process (see SNAPSHOT_COMMIT) instead of up to four
 * forks of Keel's process. Throws a GitError when a git fails (a worktree's repository without HEAD).
 */
export async function snapshotCommit(side: GitSide, options: SnapshotCommitOptions): Promise<SnapshotCommit> {
  const label = ['write-tree/rev-parse/commit-tree'];
  const child = spawnGitScript(side, SNAPSHOT_COMMIT, {
    KEEL_TREE: options.tree ?? '',
    KEEL_BASELINE: options.baseline,
    KEEL_BASELINE_TREE: options.baselineTree,
    KEEL_ON_HEAD: options.onHead ? '1' : '',
    KEEL_MESSAGE: options.message,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.on('error', () => undefined);
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  if (code !== 0) throw new GitError(label, code, Buffer.concat(err).toString('utf8'));
  const [tree, head, commit, ...rest] = Buffer.concat(out).toString('utf8').trim().split(' ');
  const oid = /^[0-9a-f]{40,64}$/;
  const valid =
    tree !== undefined &&
    oid.test(tree) &&
    rest.length === 0 &&
    (head === undefined || ((head === '-' || oid.test(head)) && commit !== undefined && oid.test(commit)));
  if (!valid) throw new GitError(label, code, `unexpected answer: ${Buffer.concat(out).toString('utf8')}`);
  if (head === undefined) return { tree };
  return { tree, commit, ...(head === '-' ? {} : { head }) };
}

/** A promise with its settle functions. */
function deferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
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
