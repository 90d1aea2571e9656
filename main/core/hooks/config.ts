import path from 'node:path';
import type { Policy } from '../../common/events.js';
import { HookEventName } from '../../common/hookEvents.js';
import type { LoadedSetup, SetupFile } from '../setup/index.js';
import type { HooksBlock } from '../setup/parse.js';

/*
 * The hooks in effect, from the setup files the loader says are in effect: the user's, and the project's only
 * once approved by content hash (`loaded.files` holds nothing else; its `untrusted` files are never read here).
 * Claude Code's settings (`hooks`) and Codex's `hooks.json` have one shape:
 * `{ "<Event>": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "…", "timeout": 30 }] }] }`.
 */

/** The formats' default: a hook runs at most 60 seconds. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;

/** One command hook in effect. */
export type HookDef = {
  event: HookEventName;
  /** As written; absent, `""` and `*` match everything. */
  matcher?: string;
  command: string;
  timeoutMs: number;
  /** The file set `timeout` (a SessionEnd budget grows to it: sessionEndBudgetMs). */
  timeoutSet?: true;
  /** The file as people see it (`~/.claude/settings.json`, `.codex/hooks.json`) and its sha256. */
  source: string;
  sha256: string;
  /** Whose file it is: a user's hook may run the scripts of its own folder in the user's home (homeScripts.ts). */
  scope: 'user' | 'project';
  /** The folder of the file it came from (`~/.claude`, `<project>/.codex`), and the home or project it is in. */
  folder: string;
  root: string;
};

/** The command hooks of the files in effect, in file order; events Keel does not run and other types are left out. */
export function hooksOf(loaded: Pick<LoadedSetup, 'files'>): HookDef[] {
  const hooks: HookDef[] = [];
  const seen = new Set<string>();
  for (const file of loaded.files) {
    if (file.kind !== 'settings' && file.kind !== 'hooks') continue;
    const block = file.json?.hooks as HooksBlock | undefined;
    if (!block) continue;
    const source = file.scope === 'user' ? `~/${file.relativePath}` : file.relativePath;
    for (const [name, groups] of Object.entries(block)) {
      const event = HookEventName.safeParse(name);
      if (!event.success) continue;
      for (const group of groups) {
        for (const handler of group.hooks) {
          if (handler.type !== 'command' || !handler.command) continue;
          // Claude Code runs identical commands of one event once.
          const key = JSON.stringify([event.data, group.matcher ?? '', handler.command]);
          if (seen.has(key)) continue;
          seen.add(key);
          hooks.push({
            event: event.data,
            ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
            command: handler.command,
            timeoutMs:
              handler.timeout === undefined ? DEFAULT_HOOK_TIMEOUT_MS : Math.ceil(handler.timeout * 1000),
            ...(handler.timeout === undefined ? {} : { timeoutSet: true as const }),
            source,
            sha256: file.hash,
            scope: file.scope,
            folder: path.dirname(file.path),
            root: rootOf(file),
          });
        }
      }
    }
  }
  return hooks;
}

/** The home or project folder a setup file sits in (its path without its relative path). */
function rootOf(file: Pick<SetupFile, 'path' | 'relativePath'>): string {
  const suffix = `${path.sep}${file.relativePath.split('/').join(path.sep)}`;
  return file.path.endsWith(suffix)
    ? file.path.slice(0, -suffix.length) || path.sep
    : path.dirname(path.dirname(file.path));
}

/**
 * Whether a matcher picks a subject (a tool's names, a SessionStart source, a notification type), as Claude
 * Code's reference defines it: absent, `""` or `*` match all; a matcher of letters, digits, `_`, `-`, spaces,
 * commas and `|` is an exact name or a list (`Edit|Write`, `Edit, Write`); anything else is a regular
 * expression tested unanchored (`mcp__memory__.*`, `^Notebook`). A regex that does not compile matches nothing.
 */
export function matcherPicks(matcher: string | undefined, names: readonly string[]): boolean {
  if (matcher === undefined || matcher.trim() === '' || matcher.trim() === '*') return true;
  if (/^[A-Za-z0-9_\-, |]+$/.test(matcher)) {
    const listed = matcher
      .split(/[|,]/)
      .map((part) => part.trim())
      .filter((part) => part !== '');
    return names.some((name) => listed.includes(name));
  }
  let pattern: RegExp;
  try {
    pattern = new RegExp(matcher);
  } catch {
    return false;
  }
  return names.some((name) => pattern.test(name));
}

/** The `permission_mode` names of Claude Code's hook input. */
export type ClaudePermissionMode = 'default' | 'plan' | 'acceptEdits' | 'bypassPermissions' | 'dontAsk';

/**
 * A session's policy as the `permission_mode` a hook reads (Claude Code's names, so its hooks' checks hold):
 * plan mode is `plan` whatever the policy under it; ask is `default` (reads run, the rest asks); auto-edit is
 * `acceptEdits`; full-auto is `bypassPermissions` (nothing asks; in Keel still inside the box and under deny
 * rules); read-only is `dontAsk` (nothing asks: what is not a read is refused). Pure.
 */
export function permissionModeOf(policy: Policy, planMode: boolean): ClaudePermissionMode {
  if (planMode) return 'plan';
  switch (policy) {
    case 'ask':
      return 'default';
    case 'auto-edit':
      return 'acceptEdits';
    case 'full-auto':
      return 'bypassPermissions';
    case 'read-only':
      return 'dontAsk';
  }
}

/** Claude Code's SessionEnd budget: 1.5 s for all of an end's hooks together, unless a hook's `timeout` says more. */
export const SESSION_END_BUDGET_MS = 1_500;
/** However long a hook's `timeout`, a session's end waits at most this long for its hooks. */
export const SESSION_END_MAX_MS = 60_000;

/**
 * How long the SessionEnd hooks of one end may run, together (they run at once; each is stopped then), as Claude
 * Code's reference defines it: 1.5 s, raised to the longest `timeout` a SessionEnd hook sets, at most 60 s; the
 * environment's `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS` (a positive whole number, milliseconds) replaces it,
 * within the same 60 s. Pure.
 */
export function sessionEndBudgetMs(hooks: readonly HookDef[], env: NodeJS.ProcessEnv): number {
  const named = env.CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS?.trim();
  if (named !== undefined && /^[1-9]\d*$/.test(named)) return Math.min(Number(named), SESSION_END_MAX_MS);
  const asked = hooks.flatMap((hook) => (hook.timeoutSet ? [hook.timeoutMs] : []));
  return Math.min(Math.max(SESSION_END_BUDGET_MS, ...asked), SESSION_END_MAX_MS);
}
