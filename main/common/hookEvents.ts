import { z } from 'zod';
import { eventBase } from './eventBase.js';

/*
 * Issue #30: the event of one hook run (Claude Code's and Codex's hooks, main/core/hooks), kept out of
 * events.ts, which imports it. Every run is recorded before its decision takes effect; on resume the decision
 * is read back from here, never asked of the hook again.
 */

const { base } = eventBase;

/** The hook events Keel runs, by the names the formats use. */
export const HookEventName = z.enum([
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  /** A subagent's Stop: run in the child session when its model would end (the parent's SubagentStop hooks). */
  'SubagentStop',
  'PreCompact',
  'Notification',
  /** When a host lets go of a session it ran (a run's exit, an editor's close, the app's quit) or deletes it. */
  'SessionEnd',
]);
export type HookEventName = z.infer<typeof HookEventName>;

/**
 * SessionEnd's `reason`, by Claude Code's names: `clear` (the session was deleted: its conversation is gone),
 * `prompt_input_exit` (the user quit the app), `other` (`keel run` / `keel resume` exiting, an editor closing
 * the session or `keel acp`, `keel serve` stopping); `logout` is Claude Code's and never sent by Keel.
 */
export const SessionEndReason = z.enum(['clear', 'logout', 'prompt_input_exit', 'other']);
export type SessionEndReason = z.infer<typeof SessionEndReason>;

/**
 * What a run decided: `none` (nothing to say), `allow` / `ask` / `deny` (PreToolUse), `block` (exit code 2 or
 * `decision: "block"`: the prompt is refused, the tool's result is answered by the reason, the turn goes on),
 * `error` (the hook failed: another exit code, a timeout, a start failure; never an allow).
 */
export const HookDecision = z.enum(['none', 'allow', 'ask', 'deny', 'block', 'error']);
export type HookDecision = z.infer<typeof HookDecision>;

export const HookRan = z.object({
  ...base,
  kind: z.literal('hook_ran'),
  /** Which hook: the file as shown (`~/.claude/settings.json`, `.codex/hooks.json`), its sha256, its command. */
  source: z.string().min(1),
  sha256: z.string().min(1),
  command: z.string().min(1),
  event: HookEventName,
  /** What the run is about: `call:<toolCallId>`, `prompt:<seq>`, `stop:<seq>`… (resume finds it by this). */
  subject: z.string().min(1),
  /** sha256 (hex) of the JSON the hook read on stdin. */
  inputDigest: z.string().min(1),
  decision: HookDecision,
  /** The hook's reason (`permissionDecisionReason`, `reason`, stderr with exit code 2), or why it failed. */
  reason: z.string().optional(),
  /** Told to the model (projected as a user message): `additionalContext`, a block's reason, feedback. */
  context: z.string().optional(),
  /** PreToolUse's `updatedInput`: the arguments the call runs with (and the approval shows). */
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  /** `continue: false`: the turn ends after this hook (over any decision), with `stopReason` for the user. */
  stop: z.boolean().optional(),
  /** `stopReason` with `continue: false`: shown to the user, never to the model. */
  stopReason: z.string().optional(),
  /** `suppressOutput: true`: what the hook printed on stdout is not kept in `output` (stderr still is). */
  suppressed: z.boolean().optional(),
  /** `systemMessage`: shown to the user. */
  systemMessage: z.string().optional(),
  /** The start of what it printed (stdout then stderr), redacted; `bytes` it printed in all. */
  output: z.string(),
  bytes: z.number().int().nonnegative(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean().optional(),
  durationMs: z.number().int().nonnegative(),
});
export type HookRan = z.infer<typeof HookRan>;
