import type { EventOf } from '../../api/types.js';
import type { ToolItem, TranscriptItem } from '../session/transcriptItems.js';

/** How a command run stands or ended, as the terminal header shows it. */
export type RunState =
  | 'waiting'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'memory'
  | 'stopped'
  | 'killed'
  | 'cancelled'
  | 'unknown';

/** A run's state in words, with what the log says about its end. */
export type RunStatus = {
  state: RunState;
  label: string;
  exitCode?: number | null;
  signal?: string | null;
  durationMs?: number;
  /** The artifact holding the whole output, when the run recorded one. */
  artifact?: string;
};

/** What a command run is, from the transcript's tool row (only the fields read here). */
export type RunFacts = {
  status: 'requested' | 'awaiting_approval' | 'denied' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  result?: EventOf<'tool_result'>;
};

/** A command run as the dock shows it: the transcript's tool row of a run_command call. */
export type DockRunInfo = RunFacts & { toolCallId: string; name: string; arguments: string };

/** The run_command rows among transcript rows, in order. */
export function commandRunsOf(items: readonly TranscriptItem[]): ToolItem[] {
  return items.filter((item): item is ToolItem => item.type === 'tool' && item.name === 'run_command');
}

/**
 * A run's state from its tool row and result: exit status, duration, and the runner's own note on how it
 * ended (`[timed out after …]`, `[killed for exceeding the … memory cap …]`, `[stopped by the user …]`,
 * `[killed by SIG…]`), which the event carries only in its text. `sessionRunning` false turns a run left
 * running into `unknown` (its turn died; resume decides). Pure.
 */
export function runStatusOf(run: RunFacts, sessionRunning: boolean): RunStatus {
  const result = run.result;
  if (!result) {
    if (run.status === 'running') {
      return sessionRunning
        ? { state: 'running', label: 'Running' }
        : { state: 'unknown', label: 'Outcome unknown' };
    }
    if (run.status === 'denied') return { state: 'cancelled', label: 'Denied: not run' };
    if (run.status === 'cancelled') return { state: 'cancelled', label: 'Cancelled: not run' };
    return { state: 'waiting', label: run.status === 'awaiting_approval' ? 'Awaiting approval' : 'Queued' };
  }
  const facts = {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    ...(result.durationMs !== undefined ? { durationMs: result.durationMs } : {}),
    ...(result.artifact ? { artifact: result.artifact } : {}),
  };
  const notes = result.content.slice(-2_000);
  const timedOut = /\[timed out after (\d+) ms/.exec(notes);
  if (timedOut) return { ...facts, state: 'timed_out', label: `Timed out after ${timedOut[1]} ms: killed` };
  const memory = /\[killed for exceeding the (\d+) MB memory cap/.exec(notes);
  if (memory) return { ...facts, state: 'memory', label: `Killed: over the ${memory[1]} MB memory cap` };
  if (/\[stopped by the user/.test(notes)) return { ...facts, state: 'stopped', label: 'Killed by you' };
  if (facts.signal) return { ...facts, state: 'killed', label: `Killed by ${facts.signal}` };
  if (facts.exitCode === 0) return { ...facts, state: 'succeeded', label: 'Exit 0' };
  if (facts.exitCode !== null) return { ...facts, state: 'failed', label: `Exit ${facts.exitCode}` };
  return {
    ...facts,
    state: result.isError ? 'failed' : 'succeeded',
    label: result.isError ? 'Failed' : 'Done',
  };
}

/** The command a run_command call asked for, from its JSON arguments (the raw text when it is not JSON). */
export function commandOf(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (parsed && typeof parsed === 'object' && 'command' in parsed && typeof parsed.command === 'string') {
      return parsed.command;
    }
  } catch {
    // Not JSON (a cut stream): show what the model sent.
  }
  return argumentsText;
}

/** The part of a run_command result the model got, without the runner's trailing `[…]` notes: for replay. */
export function excerptOf(content: string): { text: string; notes: string[] } {
  const lines = content.split('\n');
  const notes: string[] = [];
  while (lines.length > 0 && /^\[.*\]$/.test(lines.at(-1) ?? '')) notes.unshift(lines.pop()!);
  return { text: lines.join('\n'), notes };
}
