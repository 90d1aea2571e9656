import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../../common/clock.js';
import type { Policy, ToolMode } from '../../common/events.js';
import { runGit } from '../persistent/git.js';
import type { NetworkPolicy, SandboxInfo } from '../../sandbox/box.js';
import { insideView, viewPidOf } from '../../sandbox/viewPath.js';

/**
 * The environment block: the volatile facts of one request (date, OS, shell, git, the box, the policy).
 * The turn engine sends it after every message of each request (Payload.environment) and never logs it,
 * so the system prompt and the conversation before it stay byte-stable for prompt caching.
 */

/** The block's first line (its last is `</environment>`): how a reader of a request tells it apart. */
export const ENVIRONMENT_OPENING = '<environment>';

/** Changed-file lines of `git status --short` shown at most; the rest are counted. */
export const STATUS_LINES_SHOWN = 20;

/** What the block says, gathered by describeEnvironment (or given by a test). */
export type EnvironmentFacts = {
  /** The local calendar day, YYYY-MM-DD, and the time zone it is in. */
  date: string;
  timeZone: string;
  /** The operating system, e.g. "Debian GNU/Linux 12 (bookworm); Linux 6.1.0 x64". */
  os: string;
  /** The project's git branch (`detached at <sha>` when HEAD names no branch); absent outside a repository. */
  branch?: string;
  /** `git status --short` lines of the project folder (absent when git cannot tell). */
  status?: string[];
  sandbox: SandboxInfo['kind'];
  network: NetworkPolicy;
  policy: Policy;
  toolMode: ToolMode;
  /** Issue #30: plan mode is on (absent: off). */
  planMode?: boolean;
};

/** The block's line while plan mode is on: what the model may do and how it ends (issue #30). */
export const PLAN_MODE_LINE =
  'Plan mode: on. Read and search only (read_file, grep, glob, list_dir, todo); edits, commands, subagents and ' +
  'MCP tools are refused. When you know what to change, call present_plan with the plan in markdown and stop; ' +
  'the user approves it (then you implement it) or sends it back with comments.';

/** The block as the model reads it. Pure: the same facts give the same bytes. */
export function formatEnvironment(facts: EnvironmentFacts): string {
  const lines = [
    ENVIRONMENT_OPENING,
    `Date: ${facts.date} (${facts.timeZone})`,
    `OS: ${facts.os}`,
    'Shell: bash (run_command runs `bash -c <command>`; no interactive input)',
    ...gitLines(facts),
    `Box: ${describeBox(facts.sandbox, facts.network)}`,
    `Policy: ${describePolicy(facts.policy, facts.toolMode, facts.sandbox)}`,
    ...(facts.planMode ? [PLAN_MODE_LINE] : []),
    '</environment>',
  ];
  return lines.join('\n');
}

function gitLines(facts: EnvironmentFacts): string[] {
  if (facts.branch === undefined && facts.status === undefined) return ['Git: not a git repository'];
  const branch = `Git: branch ${facts.branch ?? 'unknown'}`;
  if (facts.status === undefined) return [branch];
  if (facts.status.length === 0) return [`${branch}; git status: clean`];
  const shown = facts.status.slice(0, STATUS_LINES_SHOWN);
  const more = facts.status.length - shown.length;
  return [
    `${branch}; git status --short:`,
    ...shown.map((line) => `  ${line}`),
    ...(more > 0 ? [`  … and ${more} more`] : []),
  ];
}

function describeBox(sandbox: SandboxInfo['kind'], network: NetworkPolicy): string {
  const reach =
    network === 'none'
      ? 'no network access'
      : `network access only to ${network.allow.join(', ')} (through Keel's proxy; other hosts are refused)`;
  switch (sandbox) {
    case 'bwrap':
      return `commands run in a bubblewrap sandbox: only the workspace is writable, ${reach}`;
    case 'sandbox-exec':
      return `commands run under macOS sandbox-exec: only the workspace is writable, ${reach}`;
    case 'none':
      return 'no OS sandbox on this machine: commands run unconfined, so every command asks for approval';
  }
}

function describePolicy(policy: Policy, toolMode: ToolMode, sandbox: SandboxInfo['kind']): string {
  if (toolMode === 'read-only' || policy === 'read-only')
    return 'read-only: you can read and search; nothing can be changed and no command runs';
  switch (policy) {
    case 'ask':
      return 'ask: reads run; every edit and every command asks for approval first';
    case 'auto-edit':
      return 'auto-edit: reads and edits inside the project run; commands ask for approval first';
    case 'full-auto':
      return sandbox === 'none'
        ? 'full-auto: reads and edits inside the project run without asking; commands ask (no OS sandbox here)'
        : 'full-auto: reads, edits and commands inside the box run without asking';
  }
}

/** Where describeEnvironment looks and what it reports about the session. */
export type EnvironmentSource = {
  clock: Clock;
  /** The user's project folder (its branch is reported: a checkout has none of its own). */
  projectFolder: string;
  /** Absolute path of the folder the model works in (its `git status` is reported). */
  projectRoot: string;
  sandbox: SandboxInfo;
  network: NetworkPolicy;
  policy: Policy;
  toolMode: ToolMode;
  planMode?: boolean;
};

/** The git part of the block: the project's branch and the model's folder's `git status --short` lines. */
export type GitFacts = { branch?: string; status?: string[] };

/**
 * Reads the git facts (never rejects: what cannot be read is left out); `knownStatus` is asked first for the status
 * (a view's, from its layers), git when it answers undefined or fails. Git runs only where a `.git` entry
 * exists (with Keel's fixed git settings: no hooks, no fsmonitor), limited to 3 s. A host may start this
 * ahead of the request and hand the promise to describeEnvironment (turnHost.ts does, for a turn's first).
 * The checks before git and the branch's files are read synchronously (a few stat calls, ~50 µs): as
 * promises each waited for a gap in the turn's synchronous work (its appends, the projection), so git
 * started ~3.5 ms after the read-ahead did; now it starts at once and runs while the turn does.
 */
export async function readGitFacts(
  source: Pick<EnvironmentSource, 'projectFolder' | 'projectRoot'>,
  knownStatus?: (folder: string) => Promise<string[] | undefined>,
): Promise<GitFacts> {
  // A checkout (a folder other than the project's own) is asked about itself only.
  const realFolder = realpathOr(source.projectFolder);
  const isCheckout = path.resolve(source.projectRoot) !== realFolder;
  // A copy-on-write view may know its status without a git over its files (issue #36); else git is asked.
  const status =
    knownStatus === undefined
      ? readStatus(source.projectRoot, isCheckout)
      : knownStatus(source.projectRoot).then(
          (lines) => lines ?? readStatus(source.projectRoot, isCheckout),
          () => readStatus(source.projectRoot, isCheckout),
        );
  const branch = readBranch(source.projectFolder);
  const lines = await status;
  return { ...(branch === undefined ? {} : { branch }), ...(lines === undefined ? {} : { status: lines }) };
}

/**
 * The git facts of a checkout known to be clean (issue #36: `Checkout.isKnownClean`): the project's branch, read
 * from its files, and an empty status, without a git over the whole tree (its work grows with the project).
 */
export function knownCleanGitFacts(projectFolder: string): GitFacts {
  const branch = readBranch(projectFolder);
  return { ...(branch === undefined ? {} : { branch }), status: [] };
}

function realpathOr(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/**
 * Gathers the facts (the git ones read now, or `git` read ahead) and formats the block. Never throws: what
 * cannot be read is left out.
 */
export async function describeEnvironment(
  source: EnvironmentSource,
  git: Promise<GitFacts> = readGitFacts(source),
): Promise<string> {
  const now = source.clock.now();
  const timeZone = systemTimeZone();
  const { branch, status } = await git;
  return formatEnvironment({
    date: localDay(now, timeZone),
    timeZone,
    os: describeOs(),
    ...(branch === undefined ? {} : { branch }),
    ...(status === undefined ? {} : { status }),
    sandbox: source.sandbox.kind,
    network: source.network,
    policy: source.policy,
    toolMode: source.toolMode,
    ...(source.planMode ? { planMode: true } : {}),
  });
}

let timeZoneAsked: { tz: string | undefined; zone: string } | undefined;

/**
 * The machine's time zone, asked of Intl again only when TZ changes (Node re-reads the zone then; each ask
 * builds a formatter, ~0.2 ms).
 */
function systemTimeZone(): string {
  const tz = process.env['TZ'];
  if (timeZoneAsked?.tz !== tz || timeZoneAsked === undefined)
    timeZoneAsked = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' };
  return timeZoneAsked.zone;
}

/** One day formatter per time zone: building one costs more than formatting with it. */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

function localDay(now: Date, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    dayFormats.set(timeZone, format);
  }
  const parts = format.formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

let osDescription: string | undefined;

/** The distribution's name (Linux: /etc/os-release PRETTY_NAME) and the kernel; read once per process. */
function describeOs(): string {
  if (osDescription !== undefined) return osDescription;
  let distribution: string | undefined;
  if (process.platform === 'linux') {
    try {
      const text = readFileSync('/etc/os-release', 'utf8');
      distribution = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(text)?.[1];
    } catch {
      distribution = undefined;
    }
  }
  const kernel = `${os.type()} ${os.release()} ${os.arch()}`;
  osDescription = distribution ? `${distribution}; ${kernel}` : kernel;
  return osDescription;
}

/**
 * The branch HEAD names in the repository holding `folder` (its own `.git` or an ancestor's), read from
 * the HEAD file without running git; `detached at <sha>` for a detached HEAD; undefined outside one.
 */
function readBranch(folder: string): string | undefined {
  const repository = enclosingRepository(folder);
  const gitDir = repository === undefined ? undefined : gitDirOf(repository);
  if (gitDir === undefined) return undefined;
  const head = readTextOr(path.join(gitDir, 'HEAD'));
  if (head === undefined) return undefined;
  const ref = /^ref: refs\/heads\/(.+)$/m.exec(head)?.[1];
  if (ref !== undefined) return ref.trim();
  const sha = /^[0-9a-f]{40,64}$/.exec(head.trim())?.[0];
  return sha === undefined ? undefined : `detached at ${sha.slice(0, 7)}`;
}

function readTextOr(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The folder holding `.git` (a folder or a worktree's file): `folder` itself or its nearest ancestor that has one. */
function enclosingRepository(folder: string, onlyItself = false): string | undefined {
  for (let current = path.resolve(folder); ; current = path.dirname(current)) {
    if (hasEntry(path.join(current, '.git'))) return current;
    if (onlyItself || path.dirname(current) === current) return undefined;
  }
}

/** Whether the path names anything (a link too); an entry that cannot be looked at counts as none. */
function hasEntry(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** The git folder `<folder>/.git` stands for: itself, or what a `.git` file's `gitdir:` line names. */
function gitDirOf(folder: string): string | undefined {
  const dotGit = path.join(folder, '.git');
  let stat;
  try {
    stat = statSync(dotGit, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (stat === undefined) return undefined;
  if (stat.isDirectory()) return dotGit;
  const text = readTextOr(dotGit) ?? '';
  const named = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return named === undefined ? undefined : path.resolve(folder, named);
}

/**
 * `git status --short` of the folder (paths relative to it, only below it), or undefined when git cannot
 * tell. No git runs unless the folder (or, with `onlyItself` false, an ancestor) holds `.git`; with
 * `onlyItself` git never looks above the folder (a checkout inside Keel's home is not the home's repository).
 */
async function readStatus(folder: string, onlyItself: boolean): Promise<string[] | undefined> {
  if (enclosingRepository(folder, onlyItself) === undefined) return undefined;
  try {
    // A copy-on-write view (issue #36) is read by a git in its holder's namespace, where its files are.
    const pid = viewPidOf(folder);
    const cwd = insideView(folder);
    const { stdout } = await runGit(
      {
        cwd,
        env: onlyItself ? { GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(cwd)) } : {},
        config: ['color.status=false', 'status.relativePaths=true'],
        ...(pid === undefined ? {} : { inView: pid }),
      },
      ['status', '--short', '--untracked-files=normal', '--', '.'],
      { timeoutMs: 3_000 },
    );
    const text = stdout.toString('utf8').trimEnd();
    return text === '' ? [] : text.split('\n');
  } catch {
    return undefined;
  }
}
