import { z } from 'zod';
import { eventBase } from './eventBase.js';

/*
 * The vocabulary of the setup a user brings from other tools (Claude Code's `.claude/`, the shared `.agents/`,
 * Codex's `.codex/hooks.json`) and Keel's own `.keel/`: where a file came from, what it is, whether the
 * project's copy is approved. main/core/setup reads the files; the IPC contract and the CLI show them.
 */

/** Whose file: the user's home (trusted) or the project folder (trusted only once approved by hash). */
export const SetupScope = z.enum(['user', 'project']);
export type SetupScope = z.infer<typeof SetupScope>;

/** Which tool's folder layout the file sits in. */
export const SetupLayout = z.enum(['claude', 'agents', 'keel', 'codex']);
export type SetupLayout = z.infer<typeof SetupLayout>;

/**
 * What the file is: `settings` (permissions, hooks, …), `hooks` (a hooks-only file: `.codex/hooks.json`),
 * `command` (a `/name` prompt), `agent` (a named subagent), `skill` (a SKILL.md folder), `resource` (any
 * other file of a skill folder, approved with it).
 */
export const SetupKind = z.enum(['settings', 'hooks', 'command', 'agent', 'skill', 'resource']);
export type SetupKind = z.infer<typeof SetupKind>;

/** A file that could not be read as its format says: it is ignored whole, never half-applied. */
export const SetupProblem = z.object({
  path: z.string(),
  /** 1-based line of the fault (1 when the file as a whole is at fault). */
  line: z.number().int().positive(),
  message: z.string(),
});
export type SetupProblem = z.infer<typeof SetupProblem>;

/**
 * One project file in a trust report: `approved` (the hash approved last), `new` (never approved), `changed`
 * (approved with other bytes), `removed` (approved, gone now; nothing to trust). `diff` is a unified diff from
 * the approved bytes (or from nothing for a new file), absent when either side is not text or too big.
 */
export const SetupTrustEntry = z.object({
  path: z.string(),
  layout: SetupLayout,
  kind: SetupKind,
  state: z.enum(['approved', 'new', 'changed', 'removed']),
  hash: z.string(),
  size: z.number().int().nonnegative(),
  diff: z.string().optional(),
});
export type SetupTrustEntry = z.infer<typeof SetupTrustEntry>;

/** What a project folder brings and whether it is approved, as `keel trust` and the settings screen show it. */
export const SetupTrustReport = z.object({
  project: z.string(),
  /** `none` (the folder brings nothing), `trusted` (every file approved as it is), `untrusted` (something is not). */
  status: z.enum(['none', 'trusted', 'untrusted']),
  entries: z.array(SetupTrustEntry),
  problems: z.array(SetupProblem),
  /** When and through what the newest approval was given. */
  approvedAt: z.string().optional(),
  approvedVia: z.string().optional(),
});
export type SetupTrustReport = z.infer<typeof SetupTrustReport>;

/** Where a permission rule in effect came from: a settings file (user or approved project) or Keel's own rules. */
export const PermissionRuleSource = z.object({
  action: z.enum(['allow', 'ask', 'deny']),
  /** The rule as written: `Bash(npm test:*)`, `Edit(src/**)`, `mcp__github`. */
  rule: z.string().min(1),
  /** Where it came from, as a person reads it: `project .claude/settings.json`, `user ~/.keel/settings.json`, `keel`. */
  source: z.string().min(1),
});
export type PermissionRuleSource = z.infer<typeof PermissionRuleSource>;

/**
 * The permission rules a turn found in effect (the user's settings files, the project's approved ones, Keel's
 * own rules), appended when they differ from the newest such event: from here on the gate reads them (deny
 * refuses over every policy, ask forces a request, allow runs what a prefix grant would). An imported one is
 * in effect nowhere here.
 */
export const PermissionRulesApplied = z.object({
  ...eventBase.base,
  kind: z.literal('permission_rules_applied'),
  /** Real path of the project folder (paths in rules are read from it). */
  project: z.string().min(1),
  /** The user's home folder `~/` in a rule means ('' when unknown). */
  userHome: z.string(),
  rules: z.array(PermissionRuleSource),
});
