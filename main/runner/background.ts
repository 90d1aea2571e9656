import { readlinkSync } from 'node:fs';
import type { BackgroundEndReason } from '../common/backgroundEvents.js';
import type { NetworkJoin } from '../sandbox/box.js';
import { IDLE_FLUSH_MS, runCommand, type RunCommandOptions, type RunCommandResult } from './boxedCommand.js';
import { registerBackgroundEnd } from './backgroundEnd.js';
import { cleanOutput } from './excerpt.js';
import { collectRunProcesses } from './processTree.js';

/*
 * Background commands (issue #32): a command the model starts that outlives its call (a dev server, a
 * watcher). It is an ordinary boxed run (runCommand: pty, bwrap, lifeline, cgroup, the run tree killed at the
 * end), only nobody awaits it: the call returns its first output and a handle. Everything here is in this
 * process's memory on purpose: a background command never survives Keel (the runner's chain kills its box
 * when Keel dies), so a later Keel has nothing to reattach to and says so instead.
 *
 * The network: every box has its own network namespace, so a server in one box is unreachable from the next
 * command's. The session's first background command's namespace becomes the session's: later commands (and
 * background commands) of the session are started inside it (bwrap without --unshare-net, under nsenter on
 * the namespace the launcher opened and checked; see NetworkJoin). A shared long-lived box per session would
 * do the same, but would change how every command runs (its own pty, cgroup, marker and kill); joining keeps
 * each command its own box and touches only the network. The namespace is private all the same: nothing
 * outside the session's boxes can reach it, and it ends with the last process in it.
 */

/** Live output kept per command for command_output (characters; older output stays in the artifact). */
export const BACKGROUND_BUFFER_CHARS = 1024 * 1024;
/** The most of one read the model is given (the newest part; the rest is in the artifact). */
export const BACKGROUND_READ_CHARS = 16 * 1024;

/** What a background command's start returns: its output so far and how it stands. */
export interface BackgroundSnapshot {
  handle: string;
  command: string;
  /** New (cleaned, redacted) output since `since`, at most BACKGROUND_READ_CHARS of its end. */
  output: string;
  /** Characters of new output left out of `output` (older than its last BACKGROUND_READ_CHARS, or dropped). */
  skipped: number;
  /** Pass as `since` to read only what comes after this read. */
  cursor: number;
  /** null while it runs. */
  exit: RunCommandResult | null;
  /** Where its whole output is, as the reader names it (options.artifactHandle), when given. */
  wholeOutput?: string;
}

type Entry = {
  handle: string;
  command: string;
  startedAt: number;
  controller: AbortController;
  /** Live output, its start at character `dropped` of the whole output. */
  buffer: string;
  dropped: number;
  exit: RunCommandResult | null;
  done: Promise<RunCommandResult>;
  /** Resolved whenever output arrives or the command ends (the first-output wait). */
  waiters: Set<() => void>;
  box: { pid: number; runId: string } | null;
  /** Its end was recorded in the session's log (background_exited), so it is recorded once. */
  exitRecorded: boolean;
  wholeOutput?: string;
};

type SessionEntries = { commands: Map<string, Entry>; network: NetworkJoin | null };

const sessions = new Map<string, SessionEntries>();

/** A background command's end its session's log does not have yet (the host records it: background_exited). */
export interface BackgroundEnd {
  handle: string;
  command: string;
  reason: BackgroundEndReason;
  exitCode: number | null;
  signal: string | null;
}

/**
 * Ends of commands a stop of their session (or of Keel) killed and forgot, by session key, until the host records
 * them (takeUnrecordedEnds): the stop itself often cannot write the log (a turn holds it, or the host is quitting).
 */
const unrecorded = new Map<string, BackgroundEnd[]>();

/** Why a command that ended by itself (or by its own stop) ended. */
function reasonOf(exit: RunCommandResult): BackgroundEndReason {
  return exit.aborted ? 'stopped' : exit.timedOut ? 'timed_out' : 'exited';
}

function sessionOf(key: string): SessionEntries {
  let found = sessions.get(key);
  if (found === undefined) {
    found = { commands: new Map(), network: null };
    sessions.set(key, found);
  }
  return found;
}

/** Options of startBackground: a run's options without the ones this module owns. */
export type BackgroundStartOptions = Omit<
  RunCommandOptions,
  'signal' | 'onStart' | 'joinNetwork' | 'onData'
> & {
  /** Live output for a view (redacted, with colours). */
  onData?: (text: string) => void;
};

/**
 * Starts `options.command` in the background for the session `sessionKey` (its data folder) under `handle`,
 * and resolves with its first output: after `waitMs`, as soon as the output contains `until`, or when it
 * ends, whichever comes first. The command keeps running until stopBackground, stopSessionBackground, its
 * timeout, or Keel's end. Rejects (RunCommandError) when it could not start at all.
 */
export async function startBackground(
  sessionKey: string,
  handle: string,
  options: BackgroundStartOptions,
  wait: { waitMs: number; until?: string },
): Promise<BackgroundSnapshot> {
  registerBackgroundEnd(() => stopSessionBackground(undefined, 'keel_ended'));
  const session = sessionOf(sessionKey);
  if (session.commands.has(handle)) throw new Error(`a background command ${handle} already exists`);
  const join = liveNetwork(session);
  const controller = new AbortController();
  const entry: Entry = {
    handle,
    command: options.command,
    startedAt: Date.now(),
    controller,
    buffer: '',
    dropped: 0,
    exit: null,
    done: Promise.resolve(null as unknown as RunCommandResult),
    waiters: new Set(),
    box: null,
    exitRecorded: false,
    ...(options.artifactHandle !== undefined ? { wholeOutput: options.artifactHandle } : {}),
  };
  const wake = (): void => {
    for (const waiter of entry.waiters) waiter();
  };
  let rejectStart: ((error: unknown) => void) | null = null;
  const failed = new Promise<never>((_, reject) => {
    rejectStart = reject;
  });
  failed.catch(() => undefined);
  entry.done = runCommand({
    ...options,
    signal: controller.signal,
    ...(join === null ? {} : { joinNetwork: join }),
    onStart: (box) => {
      entry.box = box;
    },
    onData: (text) => {
      entry.buffer += text;
      if (entry.buffer.length > BACKGROUND_BUFFER_CHARS) {
        const cut = entry.buffer.length - BACKGROUND_BUFFER_CHARS;
        entry.buffer = entry.buffer.slice(cut);
        entry.dropped += cut;
      }
      options.onData?.(text);
      wake();
    },
  });
  entry.done.then(
    (result) => {
      entry.exit = result;
      wake();
    },
    (error: unknown) => rejectStart?.(error),
  );
  session.commands.set(handle, entry);
  try {
    await Promise.race([failed, firstOutput(entry, wait)]);
  } catch (error) {
    session.commands.delete(handle);
    throw error;
  }
  // The session's namespace is the first background command's; found once its box is up.
  if (session.network === null) session.network = await findNetwork(entry);
  return snapshot(entry, 0);
}

async function firstOutput(entry: Entry, wait: { waitMs: number; until?: string }): Promise<void> {
  const deadline = Date.now() + wait.waitMs;
  const reached = (): boolean =>
    entry.exit !== null ||
    (wait.until !== undefined && wait.until !== '' && cleanOutput(entry.buffer).includes(wait.until));
  while (!reached() && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      function done(): void {
        clearTimeout(timer);
        entry.waiters.delete(done);
        resolve();
      }
      entry.waiters.add(done);
    });
  }
}

/** New output of a background command since `since` (a cursor of an earlier read; default all kept). */
export function readBackground(
  sessionKey: string,
  handle: string,
  since?: number,
): BackgroundSnapshot | null {
  const entry = sessions.get(sessionKey)?.commands.get(handle);
  return entry === undefined ? null : snapshot(entry, since ?? 0);
}

/**
 * As readBackground, once what the command printed before this call has reached its buffer: a running command's
 * last output is held back until IDLE_FLUSH_MS of quiet (the live stream's redaction of a secret split across
 * chunks), so a read right after a request the command answered would miss the line it logged for it.
 */
export async function readBackgroundSettled(
  sessionKey: string,
  handle: string,
  since?: number,
): Promise<BackgroundSnapshot | null> {
  const entry = sessions.get(sessionKey)?.commands.get(handle);
  if (entry === undefined) return null;
  if (entry.exit === null) await new Promise((resolve) => setTimeout(resolve, IDLE_FLUSH_MS + 50));
  return readBackground(sessionKey, handle, since);
}

/**
 * True the first time it is asked for an ended command: its caller records its end (background_exited), once.
 */
export function claimExitRecord(sessionKey: string, handle: string): boolean {
  const entry = sessions.get(sessionKey)?.commands.get(handle);
  if (entry === undefined || entry.exit === null || entry.exitRecorded) return false;
  entry.exitRecorded = true;
  return true;
}

/** Stops a background command (its whole tree) and resolves with its end; null when the handle is unknown. */
export async function stopBackground(sessionKey: string, handle: string): Promise<BackgroundSnapshot | null> {
  const entry = sessions.get(sessionKey)?.commands.get(handle);
  if (entry === undefined) return null;
  entry.controller.abort();
  await entry.done.catch(() => undefined);
  return snapshot(entry, entry.dropped + entry.buffer.length);
}

/** Characters of a command's latest output a listing carries (`tail`). */
export const BACKGROUND_TAIL_CHARS = 4096;

/** The session's background commands (running and ended) in the order they started. */
export function listBackground(sessionKey: string): {
  handle: string;
  command: string;
  startedAt: number;
  exit: RunCommandResult | null;
  runId: string | null;
  /** The box's launcher process (the run tree's root), once it is up. */
  pid: number | null;
  /** Its latest output (cleaned, redacted), at most BACKGROUND_TAIL_CHARS. */
  tail: string;
}[] {
  const session = sessions.get(sessionKey);
  if (session === undefined) return [];
  return [...session.commands.values()].map(({ handle, command, startedAt, exit, box, buffer }) => ({
    handle,
    command,
    startedAt,
    exit,
    runId: box?.runId ?? null,
    pid: box?.pid ?? null,
    tail: cleanOutput(buffer.slice(-BACKGROUND_TAIL_CHARS)),
  }));
}

/**
 * Stops every background command of the session (all sessions without a key) and forgets them (the session is
 * stopped, archived or deleted, or the host shuts down); resolves once each tree is gone, with how many it stopped.
 * Each end the log does not have yet is kept for takeUnrecordedEnds: a command this stop killed with `reason`
 * (`session_stopped`, or `keel_ended` when the host ends), one that had ended before with its own.
 */
export async function stopSessionBackground(
  sessionKey: string | undefined,
  reason: 'session_stopped' | 'keel_ended',
): Promise<number> {
  const keys = sessionKey === undefined ? [...sessions.keys()] : [sessionKey];
  const stopping = keys.map((key) => ({ key, entries: [...(sessions.get(key)?.commands.values() ?? [])] }));
  for (const key of keys) sessions.delete(key);
  const running = new Set(stopping.flatMap(({ entries }) => entries.filter((entry) => entry.exit === null)));
  for (const entry of running) entry.controller.abort();
  await Promise.all([...running].map((entry) => entry.done.catch(() => undefined)));
  for (const { key, entries } of stopping) {
    const ends = entries
      .filter((entry) => !entry.exitRecorded && entry.exit !== null)
      .map((entry) => endOf(entry, running.has(entry) ? reason : undefined));
    if (ends.length > 0) unrecorded.set(key, [...(unrecorded.get(key) ?? []), ...ends]);
  }
  return running.size;
}

function endOf(entry: Entry, reason?: BackgroundEndReason): BackgroundEnd {
  const exit = entry.exit as RunCommandResult;
  entry.exitRecorded = true;
  return {
    handle: entry.handle,
    command: entry.command,
    reason: reason ?? reasonOf(exit),
    exitCode: exit.exitCode,
    signal: exit.signal,
  };
}

/**
 * The ends of the session's background commands its log does not have yet, claimed (each is handed out once):
 * those a stop killed, and those that ended by themselves (or by the user's stop) since. The caller records
 * them (background_exited) while it holds the log.
 */
export function takeUnrecordedEnds(sessionKey: string): BackgroundEnd[] {
  const ends = unrecorded.get(sessionKey) ?? [];
  unrecorded.delete(sessionKey);
  for (const entry of sessions.get(sessionKey)?.commands.values() ?? []) {
    if (entry.exit !== null && !entry.exitRecorded) ends.push(endOf(entry));
  }
  return ends;
}

/** Session keys with ends to record (after a stop of every session: what the host still has to write). */
export function sessionsWithUnrecordedEnds(): string[] {
  const keys = new Set(unrecorded.keys());
  for (const [key, session] of sessions) {
    if ([...session.commands.values()].some((entry) => entry.exit !== null && !entry.exitRecorded))
      keys.add(key);
  }
  return [...keys];
}

/**
 * The network namespace a new command of the session joins: the session's, while one of its background
 * commands still has a process in it. Null: none (the command gets a namespace of its own, as always).
 */
export function sessionNetwork(sessionKey: string): NetworkJoin | null {
  const session = sessions.get(sessionKey);
  return session === undefined ? null : liveNetwork(session);
}

function liveNetwork(session: SessionEntries): NetworkJoin | null {
  const network = session.network;
  if (network === null) return null;
  for (const entry of session.commands.values()) {
    if (entry.exit !== null || entry.box === null) continue;
    for (const pid of collectRunProcesses(entry.box.pid, entry.box.runId)) {
      if (nsLink(pid, 'net') !== network.net) continue;
      if (network.user !== undefined && nsLink(pid, 'user') !== network.user) continue;
      return { ...network, pid };
    }
  }
  session.network = null;
  return null;
}

/** How long a start waits for the box's namespace to appear (bwrap sets it up after the spawn). */
const NETWORK_WAIT_MS = 3000;

/** The namespace of a process of the entry's box that is not in Keel's own; waits for the box to be up. */
async function findNetwork(entry: Entry): Promise<NetworkJoin | null> {
  const deadline = Date.now() + NETWORK_WAIT_MS;
  while (entry.exit === null) {
    const found = boxNetwork(entry);
    if (found !== null || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

function boxNetwork(entry: Entry): NetworkJoin | null {
  if (entry.box === null || process.platform !== 'linux') return null;
  const ownNet = nsLink(process.pid, 'net');
  const ownUser = nsLink(process.pid, 'user');
  for (const pid of collectRunProcesses(entry.box.pid, entry.box.runId)) {
    const net = nsLink(pid, 'net');
    if (net === null || net === ownNet) continue;
    const user = nsLink(pid, 'user');
    if (user === null) continue;
    return { pid, net, ...(user === ownUser ? {} : { user }) };
  }
  return null;
}

function nsLink(pid: number, ns: 'net' | 'user'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/${ns}`);
  } catch {
    return null;
  }
}

function snapshot(entry: Entry, since: number): BackgroundSnapshot {
  const end = entry.dropped + entry.buffer.length;
  const from = Math.min(Math.max(since, 0), end);
  const available = entry.buffer.slice(Math.max(0, from - entry.dropped));
  const lost = Math.max(0, entry.dropped - from);
  const shown =
    available.length > BACKGROUND_READ_CHARS ? available.slice(-BACKGROUND_READ_CHARS) : available;
  return {
    handle: entry.handle,
    command: entry.command,
    output: cleanOutput(shown),
    skipped: lost + (available.length - shown.length),
    cursor: end,
    exit: entry.exit,
    ...(entry.wholeOutput !== undefined ? { wholeOutput: entry.wholeOutput } : {}),
  };
}
