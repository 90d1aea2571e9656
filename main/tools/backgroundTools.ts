import { z } from 'zod';
import { BackgroundHandle, describeBackgroundEnd, type BackgroundFact } from '../common/backgroundEvents.js';
import {
  claimExitRecord,
  listBackground,
  readBackground,
  readBackgroundSettled,
  stopBackground,
  type BackgroundSnapshot,
} from '../runner/background.js';
import type { RunCommandResult } from '../runner/boxedCommand.js';
import { errorOutcome } from './outcome.js';
import { previewSubject } from './preview.js';
import type { ToolContext, ToolModule, ToolOutcome } from './types.js';

/*
 * The tools of background commands (issue #32): command_output reads what a command started with
 * `run_command {background: true}` printed since the last read, stop_command stops it (its whole tree). Both
 * act only on the session's own background commands, change no file and need no approval (stopping what the
 * model itself started is not a new effect); resume simply runs them again (a read is a read, a second stop
 * finds the command ended).
 */

const handleArg = BackgroundHandle.describe('The handle run_command returned (bg-...).');

const outputParameters = z.strictObject({
  handle: handleArg,
  since: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('The cursor a previous read returned: only output after it. Default: all output still kept.'),
});

const stopParameters = z.strictObject({ handle: handleArg });

/**
 * What the model is told of a handle this Keel does not run: what the session's log says of it (never started in
 * this session, or how it ended: lost with a Keel that quit or crashed, killed with the session, …); it is gone,
 * and it is never re-run.
 */
export function unknownHandle(handle: string, ctx?: Pick<ToolContext, 'backgroundRecord'>): ToolOutcome {
  const again = 'Start it again with run_command {background: true} if you still need it.';
  const record = ctx?.backgroundRecord?.(handle);
  if (ctx?.backgroundRecord !== undefined && record === undefined) {
    return errorOutcome(
      `no background command ${handle} was started in this session (handles are bg-..., as run_command returned them)`,
    );
  }
  if (record !== undefined) {
    const how =
      record.end === undefined
        ? 'it is no longer running (the Keel that ran it ended)'
        : describeBackgroundEnd(record.end);
    return errorOutcome(
      `background command ${handle} (${record.command}) is gone: ${how}. Background commands never outlive Keel ` +
        `and are never started again by themselves. ${again}`,
    );
  }
  return errorOutcome(
    `no background command ${handle} is running here: it ended (stopped, or Keel quit or crashed since it started; ` +
      `background commands never outlive Keel and are never started again by themselves). ${again}`,
  );
}

/** command_output: new output of one background command, capped, redacted like every captured output. */
export const commandOutputTool: ToolModule<typeof outputParameters> = {
  name: 'command_output',
  description:
    'Read new output of a background command (run_command with background: true): what it printed since `since` ' +
    '(the cursor of your last read), at most the last 16 KB, and whether it is still running.',
  parameters: outputParameters,
  mode: 'write',
  kind: 'read',
  execute: async (args, ctx) => {
    const read = await readBackgroundSettled(ctx.sessionDir, args.handle, args.since);
    if (read === null) return unknownHandle(args.handle, ctx);
    return backgroundOutcome(read, {
      lead: read.exit === null ? `[${args.handle} is running]` : `[${args.handle} has ended]`,
      read: { from: args.since ?? 0, toolCallId: ctx.toolCallId ?? '' },
      sessionKey: ctx.sessionDir,
    });
  },
  preview: () => previewSubject(),
  resume: { rule: 'rerun' },
};

/** stop_command: stops one background command and its whole process tree. */
export const stopCommandTool: ToolModule<typeof stopParameters> = {
  name: 'stop_command',
  description:
    'Stop a background command (run_command with background: true) and every process it started; returns its last output.',
  parameters: stopParameters,
  mode: 'write',
  kind: 'read',
  execute: async (args, ctx) => {
    const before = readBackground(ctx.sessionDir, args.handle);
    const stopped = await stopBackground(ctx.sessionDir, args.handle);
    if (stopped === null || before === null) return unknownHandle(args.handle, ctx);
    const last = readBackground(ctx.sessionDir, args.handle, before.cursor) ?? stopped;
    return backgroundOutcome(last, {
      lead: `[${args.handle} stopped]`,
      read: { from: before.cursor, toolCallId: ctx.toolCallId ?? '' },
      sessionKey: ctx.sessionDir,
    });
  },
  preview: () => previewSubject(),
  resume: { rule: 'rerun' },
};

/** The session's background commands in one line each (for a status view or the model's own check). */
export function describeBackgroundCommands(ctx: Pick<ToolContext, 'sessionDir'>): string[] {
  return listBackground(ctx.sessionDir).map(
    (entry) =>
      `${entry.handle}: ${entry.exit === null ? 'running' : endSentence(entry.exit)} — ${entry.command}`,
  );
}

/**
 * The outcome of a start or a read: the lead line, the output (or that there is none), what was left out, the
 * end when it ended, and the cursor of the next read; the facts the turn records after the result.
 */
export function backgroundOutcome(
  snapshot: BackgroundSnapshot,
  options: {
    lead: string;
    started?: { command: string; artifact: string; toolCallId: string };
    read?: { from: number; toolCallId: string };
    waitedFor?: string;
    sessionKey?: string;
  },
): ToolOutcome {
  const lines = [options.lead];
  const output = snapshot.output.replace(/\n+$/, '');
  lines.push(output.trim() === '' ? '(no new output)' : output);
  if (snapshot.skipped > 0)
    lines.push(
      // Issue #37: where the left-out part can be read, when the model's tools can read it.
      snapshot.wholeOutput?.startsWith('/')
        ? `[${snapshot.skipped} earlier characters left out; the whole output is ${snapshot.wholeOutput} (read_file, grep)]`
        : `[${snapshot.skipped} earlier characters left out]`,
    );
  if (
    options.waitedFor !== undefined &&
    snapshot.exit === null &&
    !snapshot.output.includes(options.waitedFor)
  ) {
    lines.push(`[${JSON.stringify(options.waitedFor)} did not appear yet; it keeps running]`);
  }
  if (snapshot.exit !== null) lines.push(`[${endSentence(snapshot.exit)}]`);
  lines.push(`[next read: command_output {"handle": "${snapshot.handle}", "since": ${snapshot.cursor}}]`);
  const facts: BackgroundFact[] = [];
  if (options.started) {
    facts.push({ kind: 'background_started', handle: snapshot.handle, ...options.started });
  }
  if (options.read) {
    facts.push({
      kind: 'background_output',
      handle: snapshot.handle,
      toolCallId: options.read.toolCallId,
      from: Math.min(options.read.from, snapshot.cursor),
      to: snapshot.cursor,
    });
  }
  const key = options.sessionKey;
  if (snapshot.exit !== null && key !== undefined && claimExitRecord(key, snapshot.handle)) {
    // This call's result says it ended: the model reads it there (no note, core/projection).
    const toolCallId = options.read?.toolCallId ?? options.started?.toolCallId;
    facts.push({
      kind: 'background_exited',
      handle: snapshot.handle,
      reason: snapshot.exit.aborted ? 'stopped' : snapshot.exit.timedOut ? 'timed_out' : 'exited',
      exitCode: snapshot.exit.exitCode,
      signal: snapshot.exit.signal,
      ...(toolCallId ? { toolCallId } : {}),
    });
  }
  return {
    content: lines.join('\n'),
    isError: false,
    ...(snapshot.exit === null ? {} : { exitCode: snapshot.exit.exitCode, signal: snapshot.exit.signal }),
    background: facts,
  };
}

function endSentence(exit: RunCommandResult): string {
  if (exit.aborted) return 'stopped; the command and its children were killed';
  if (exit.timedOut)
    return `ended at its ${exit.limits.timeoutMs} ms limit; the command and its children were killed`;
  if (exit.signal !== null) return `ended by ${exit.signal}`;
  return `exited with code ${exit.exitCode ?? 'unknown'}`;
}
