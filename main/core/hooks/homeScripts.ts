import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { HookDef } from './config.js';

/*
 * Issue #30: a hook from the user's home (`~/.claude/settings.json`, `~/.codex/hooks.json`) runs a script of
 * theirs (`~/.claude/hooks/notify.sh`), but the box hides the user's home whole. The choice: such a hook runs in
 * the same box as every hook (the session's folder, its network policy, Keel's home hidden), plus, read-only,
 * exactly the scripts it is allowed to reach: the `hooks/` folder beside its own file (the same folder a
 * project's hooks run from once approved) and each file of the home its command names. Binding the whole home
 * read-only would show every hook (and what it runs) the user's keys and mail; running home hooks on the host
 * would break "a hook never runs on the host". HOME in its box is the user's home path, so `~/…` and `$HOME/…`
 * in the command name the same files they name outside. A project's hook gets none of this.
 */

/** What the box of one hook run adds for a user's hook: folders and files pinned read-only, and HOME. */
export type HomeHookMounts = { readOnly: string[]; homeVariable: string };

/** Paths a command names in the user's home: `~/x`, `$HOME/x`, `${HOME}/x`, or the home's absolute path. */
function namedPaths(command: string, userHome: string): string[] {
  const escaped = userHome.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(?:~|\\$HOME|\\$\\{HOME\\}|${escaped})(/[^\\s'";|&<>()\`$]+)`, 'g');
  return [...command.matchAll(pattern)].map((match) => path.join(userHome, match[1] as string));
}

/** The real path of `target` when it exists and stays inside `root` (links followed), else undefined. */
function realInside(target: string, root: string): string | undefined {
  try {
    const real = realpathSync(target);
    const relative = path.relative(realpathSync(root), real);
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `target` is `folder` or inside it. */
function within(target: string, folder: string): boolean {
  const relative = path.relative(folder, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * The read-only mounts and HOME of a user's hook (undefined for a project's hook, or without a user home):
 * its file's `hooks/` folder and the regular files its command names, each only when its real path is in the
 * user's home and outside every `hidden` folder (Keel's home); nothing is ever writable.
 */
export function homeHookMounts(
  hook: Pick<HookDef, 'scope' | 'folder' | 'root' | 'command'>,
  hidden: readonly string[],
): HomeHookMounts | undefined {
  if (hook.scope !== 'user') return undefined;
  const userHome = hook.root;
  const allowed = (real: string) => !hidden.some((folder) => within(real, folder));
  const readOnly = new Set<string>();
  const folder = realInside(path.join(hook.folder, 'hooks'), userHome);
  if (folder !== undefined && statSync(folder).isDirectory() && allowed(folder)) readOnly.add(folder);
  for (const named of namedPaths(hook.command, userHome)) {
    const real = realInside(named, userHome);
    if (real !== undefined && statSync(real).isFile() && allowed(real)) readOnly.add(real);
  }
  return { readOnly: [...readOnly], homeVariable: userHome };
}
