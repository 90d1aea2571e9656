import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { runCommand, type RunCommandResult } from '../runner/boxedCommand.js';
import { endLeftoverBoxes } from '../runner/boxRecords.js';
import {
  readBackground,
  sessionNetwork,
  startBackground,
  type BackgroundStartOptions,
} from '../runner/background.js';
import type { NetworkJoin } from '../sandbox/box.js';
import { backgroundOutcome } from './backgroundTools.js';
import { DEFAULT_PROTECTED_NAMES } from '../sandbox/protectedPaths.js';
import { resolvePath } from './confine.js';
import { didYouMean, nearMatches } from './nearMatches.js';
import { toolLimits } from './limits.js';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolArea, ToolContext, ToolModule, ToolOutcome } from './types.js';

/** How long a background start waits for output when the call names no ready_text. */
export const BACKGROUND_FIRST_OUTPUT_MS = 2000;
/** The longest a background start waits for its ready_text. */
export const BACKGROUND_READY_MAX_MS = 30_000;

const parameters = z.strictObject({
  command: z.string().min(1).describe('Shell command to run (bash -c), in cwd. No interactive input.'),
  cwd: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Folder to run the command in: relative to the project root, or absolute (/session/scratch for the session files). Default: the project root.',
    ),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      `Wall-clock limit in milliseconds. Default ${toolLimits.commandDefaultTimeoutMs}, at most ${toolLimits.commandMaxTimeoutMs}.`,
    ),
  background: z
    .boolean()
    .optional()
    .describe(
      'true: start a long-running command (a dev server, a watcher) and return at once with a handle and its first ' +
        'output; it keeps running (at most timeout_ms, default the maximum) until stop_command. Read more with ' +
        'command_output. Later commands of this session reach the servers it starts on localhost.',
    ),
  ready_text: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      `With background: return as soon as the output contains this text (e.g. "listening"), at most ${BACKGROUND_READY_MAX_MS / 1000} s; without it, the first ${BACKGROUND_FIRST_OUTPUT_MS / 1000} s of output.`,
    ),
});

/** run_command arguments after validation. */
export type RunCommandArgs = z.infer<typeof parameters>;

/** A file-name-safe artifact handle derived from the call's idempotency key. */
export function artifactNameFor(idempotencyKey: string): string {
  return `${idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120)}.log`;
}

/**
 * Existing protected paths a command may not write even though the workspace is writable: git
 * hooks and config (git itself keeps working), and the folders whose files run code outside the box.
 */
export function readOnlyPathsFor(workspace: string): string[] {
  const candidates = DEFAULT_PROTECTED_NAMES.flatMap(({ name }) =>
    name === '.git' ? ['.git/hooks', '.git/config'] : [name],
  );
  return candidates.map((rel) => path.join(workspace, rel)).filter((abs) => existsSync(abs));
}

/**
 * Runs a shell command in the workspace through the runner (pty, OS sandbox, timeout capped at
 * toolLimits.commandMaxTimeoutMs, memory cap); the model gets a bounded excerpt, the exit status
 * and the handle of the artifact holding the whole output. Without an OS sandbox it runs only
 * when the call is approved.
 */
export const runCommandTool: ToolModule<typeof parameters> = {
  name: 'run_command',
  description:
    'Run a shell command in the project folder (or cwd) and get its exit status and output (long output is ' +
    'shortened to its head and tail; the full output is kept as an artifact). Commands cannot read input.',
  parameters,
  mode: 'write',
  kind: 'command',
  execute: (args, ctx) =>
    args.background === true ? startInBackground(args, ctx) : runCommandInBox(args, ctx),
  preview: async (args) => {
    const preview = await previewSubject({ command: args.command });
    if (args.background !== true || !preview.ok) return preview;
    return {
      ...preview,
      note: 'runs in the background until stopped (stop_command, a stop of the session, or Keel quitting)',
    };
  },
  // A box an earlier Keel left running is ended (and waited for) before the call is settled, so nothing of
  // the first run can land its effect after the user was told the outcome is unknown, or after a re-run.
  resume: { rule: 'ask', endLeftovers: (ctx) => endLeftoverBoxes(boxRecordsDir(ctx)) },
};

/** Where the session's running boxes are recorded (outside the box's writable folders). */
function boxRecordsDir(ctx: ToolContext): string {
  return path.join(ctx.sessionDir, 'boxes');
}

/**
 * How the model is told where the whole output is: a path it can read (`/artifacts/<handle>`) when the
 * session has the artifacts area, else the bare handle as before.
 */
function shownArtifact(ctx: ToolContext, artifact: string): string {
  const area = ctx.areas?.find((candidate) => candidate.sealed && candidate.prefix === '/artifacts');
  return area ? `${area.prefix}/${artifact}` : artifact;
}

/**
 * Issue #37: what a cut result tells the model about the part it was not shown, in steps it can take: the path
 * its tools read the whole output at (only a cut result names it: the rest is all there is to read), or, in a
 * session without the artifacts area (older sessions), how to see a part by running the command narrowed.
 */
export function restOfOutputNote(shown: string, artifact: string, bytes: number): string {
  if (shown === artifact)
    return (
      `[the output above is cut to its head and tail (${bytes} bytes in all); tools cannot read the rest ` +
      'in this session: run the command again narrowed (grep, head, tail, sed -n) to see a part]'
    );
  return (
    `[the output above is cut to its head and tail (${bytes} bytes in all); the whole output is ${shown}: ` +
    'read it with read_file (offset, limit) or search it with grep]'
  );
}

async function runCommandInBox(args: RunCommandArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const requested = args.timeout_ms ?? toolLimits.commandDefaultTimeoutMs;
  const timeoutMs = Math.min(requested, toolLimits.commandMaxTimeoutMs);
  const artifact = artifactNameFor(ctx.idempotencyKey);
  const shown = shownArtifact(ctx, artifact);
  const box = await boxOptions(args, ctx, timeoutMs, artifact, shown);
  if (!('command' in box)) return box;
  const result = await runCommand({
    ...box,
    onData: ctx.onOutput,
    signal: ctx.signal,
    // A running background command's servers answer this command on localhost (its namespace, ../runner/background.ts).
    ...joinedNetwork(ctx),
  });
  const notes = [describeStatus(result)];
  if (requested > timeoutMs) notes.push(`[timeout_ms was capped at ${toolLimits.commandMaxTimeoutMs}]`);
  if (result.networkRefused.length > 0) {
    notes.push(`[network access refused by the sandbox: ${result.networkRefused.slice(0, 5).join(', ')}]`);
  }
  if (result.truncated) notes.push(restOfOutputNote(shown, artifact, result.bytes));
  const excerpt = result.excerpt.trim() === '' ? '(no output)' : result.excerpt.replace(/\n+$/, '');
  return {
    content: `${excerpt}\n${notes.join('\n')}`,
    isError: result.exitCode !== 0,
    artifact,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
  };
}

/** Where a background command's whole output is, for the model: a path its tools read, or that they cannot. */
function wholeOutputAt(shown: string, artifact: string): string {
  return shown === artifact
    ? 'its whole output is kept for the user (tools cannot read it in this session)'
    : `its whole output is written to ${shown} (read_file, grep)`;
}

/** The box options of one call (foreground or background), or the error outcome of a bad cwd. */
async function boxOptions(
  args: RunCommandArgs,
  ctx: ToolContext,
  timeoutMs: number,
  artifact: string,
  shown: string,
): Promise<BackgroundStartOptions | ToolOutcome> {
  const cwd = await commandFolder(args, ctx);
  if (typeof cwd !== 'string') return cwd;
  const boxRoot = ctx.boxRoot ?? ctx.workspace;
  const writable = extraWritablePaths(boxRoot, ctx.areas ?? []);
  return {
    command: args.command,
    workspace: boxRoot,
    ...(writable.length > 0 ? { writable } : {}),
    cwd,
    timeoutMs,
    memoryMb: toolLimits.commandMemoryMb,
    sandbox: ctx.sandbox,
    network: ctx.network ?? 'none',
    readOnly: [...readOnlyPathsFor(boxRoot), ...(ctx.boxReadOnly ?? [])],
    ...(ctx.boxHidden && ctx.boxHidden.length > 0 ? { hidden: [...ctx.boxHidden] } : {}),
    artifactPath: path.join(ctx.artifactsDir, artifact),
    artifactHandle: shown,
    idempotencyKey: ctx.idempotencyKey,
    recordDir: boxRecordsDir(ctx),
    unconfinedApproved: ctx.approved === true,
  };
}

function joinedNetwork(ctx: ToolContext): { joinNetwork?: NetworkJoin } {
  const join = sessionNetwork(ctx.sessionDir);
  return join === null ? {} : { joinNetwork: join };
}

/**
 * The handle of the background command a call starts: from the model's call id (`toolu_01A…` → `bg-toolu_01A…`),
 * else from its idempotency key (`ev12-run_command` → `bg-ev12`). The same call always gets the same handle.
 */
export function backgroundHandleFor(ctx: Pick<ToolContext, 'idempotencyKey' | 'toolCallId'>): string {
  const stem = ctx.toolCallId ?? ctx.idempotencyKey.replace(/-run_command$/, '');
  return `bg-${stem.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60)}`;
}

/**
 * run_command with background: true. Starts the command through ../runner/background.ts (the same box, limits,
 * record and artifact as a foreground run; the call's timeout is its lifetime, default the maximum) and answers
 * with its handle and first output; background_started is recorded after the result.
 */
async function startInBackground(args: RunCommandArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const timeoutMs = Math.min(
    args.timeout_ms ?? toolLimits.commandMaxTimeoutMs,
    toolLimits.commandMaxTimeoutMs,
  );
  const artifact = artifactNameFor(ctx.idempotencyKey);
  const shown = shownArtifact(ctx, artifact);
  const box = await boxOptions(args, ctx, timeoutMs, artifact, shown);
  if (!('command' in box)) return box;
  const byCall = backgroundHandleFor(ctx);
  // A provider that reuses call ids across turns: the key (unique in the session) tells them apart.
  const handle =
    readBackground(ctx.sessionDir, byCall) === null
      ? byCall
      : backgroundHandleFor({ idempotencyKey: ctx.idempotencyKey });
  const wait =
    args.ready_text === undefined
      ? { waitMs: BACKGROUND_FIRST_OUTPUT_MS }
      : { waitMs: BACKGROUND_READY_MAX_MS, until: args.ready_text };
  // The live view gets its output while the starting call runs; later output is read with command_output.
  let live = ctx.onOutput;
  const started = await startBackground(
    ctx.sessionDir,
    handle,
    { ...box, onData: (text) => live?.(text) },
    wait,
  );
  live = undefined;
  return backgroundOutcome(started, {
    lead:
      started.exit === null
        ? `[started in the background as ${handle}; read more with command_output, stop it with stop_command; ${wholeOutputAt(shown, artifact)}]`
        : `[${handle} already ended; ${wholeOutputAt(shown, artifact)}]`,
    started: { command: args.command, artifact, toolCallId: ctx.toolCallId ?? '' },
    sessionKey: ctx.sessionDir,
    ...(args.ready_text !== undefined ? { waitedFor: args.ready_text } : {}),
  });
}

/**
 * The real folder the command runs in: the call's `cwd`, else the session's default (the root), confined
 * like every path argument (links followed); an error outcome, with near matches, when it is not an existing
 * folder.
 */
async function commandFolder(args: RunCommandArgs, ctx: ToolContext): Promise<string | ToolOutcome> {
  const asked = args.cwd ?? ctx.commandCwd ?? '.';
  const real = resolvePath(ctx, asked, 'cwd');
  let isFolder = false;
  try {
    isFolder = statSync(real).isDirectory();
  } catch {
    isFolder = false;
  }
  if (isFolder) {
    // The box would refuse it naming host paths (the Keel home, the session id): say it in the model's terms.
    const boxRoot = ctx.boxRoot ?? ctx.workspace;
    const roots = [boxRoot, ...extraWritablePaths(boxRoot, ctx.areas ?? [])];
    if (roots.some((root) => isInsideFolder(root, real))) return real;
    return errorOutcome(
      `cwd ${JSON.stringify(asked)} is a folder commands cannot run in (they run in the project folder and the session's writable folders, e.g. /session/scratch)`,
    );
  }
  const near = didYouMean(await nearMatches(ctx, asked, 'folder'));
  return errorOutcome(`cwd ${JSON.stringify(asked)} is not a folder in the workspace${near}`);
}

/** True when `candidate` (real) is `root` or below it. */
function isInsideFolder(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The folders a command may write besides the box's folder: the areas outside it (a direct session's
 * /session), since the file tools write there too. Only folders that exist.
 */
export function extraWritablePaths(boxRoot: string, areas: readonly ToolArea[]): string[] {
  return areas
    .filter((area) => !area.sealed) // /artifacts: the record of outputs, never writable by a command
    .map((area) => area.root)
    .filter((root) => {
      const rel = path.relative(boxRoot, root);
      return (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) && existsSync(root);
    });
}

export function describeStatus(result: RunCommandResult): string {
  const took = `${result.durationMs} ms`;
  if (result.timedOut)
    return `[timed out after ${result.limits.timeoutMs} ms; the command and its children were killed]`;
  if (result.aborted) return `[stopped by the user after ${took}; the command and its children were killed]`;
  if (result.killedForMemory)
    return `[killed for exceeding the ${toolLimits.commandMemoryMb} MB memory cap after ${took}]`;
  if (result.signal !== null) return `[killed by ${result.signal} after ${took}]`;
  return `[exit code ${result.exitCode ?? 'unknown'}, ${took}]`;
}
