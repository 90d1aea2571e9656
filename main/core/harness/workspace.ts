import fs from 'node:fs';
import path from 'node:path';
import type { EventOf } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { sessionNetworkAllow } from '../log/imported.js';
import { existingCheckouts, markTurnStarted } from '../persistent/turnCheckouts.js';
import type { Checkout } from '../persistent/checkout.js';
import { defaultSystemPromptFor } from '../prompts/system.js';
import { namedKeys, type ProviderKeys } from '../../providers/index.js';
import { describeEnvGaps } from '../../sandbox/envFiles.js';
import { createRedactor, type Redactor } from '../../sandbox/redact.js';
import { readOnlyPathsFor } from '../../tools/runCommandTool.js';
import type { SandboxInfo } from '../../sandbox/box.js';
import type { ToolArea, ToolContext } from '../../tools/types.js';
import { commandFolderOf, describeProjectRoot, describeWorkspace } from '../prompts/workspace.js';
import { readPersistentConfig, type PersistentConfig } from '../persistent/config.js';
import { runningView } from '../persistent/viewHolder.js';
import { watchAhead } from '../persistent/backingWatch.js';
import { homeOf, sessionAreaDir } from '../paths.js';

/**
 * How a session's tools see the world: their root and areas, the prompt that explains them, and the box.
 * A session whose root is the project (`pathRoot: 'project'`): the root is the project's checkout (or
 * folder), the areas `/session` and `/persistent/<name>`. One from before: the root is `<dataDir>/workspace`
 * (or the project folder), no areas, commands in `persistent/project`, exactly as it ran then.
 */
export type SessionWorkspace = {
  /** Real path of the tools' root (their context's `workspace`): where relative paths start. */
  workspace: string;
  /** The folders a path names by prefix (`/session`, `/persistent/<name>`): existing ones only; none before. */
  areas: ToolArea[];
  /** Real path of the folder a command's box makes writable: `<dataDir>/workspace` with checkouts, else the root. */
  boxRoot: string;
  /** True for a session with Persistent Dir checkouts (its box is `<dataDir>/workspace`). */
  hasCheckouts: boolean;
  /** Appended to the system prompt (fixed text per configuration); may be empty. */
  promptSuffix: string;
  /** Folder (relative to `workspace`) commands run in by default: `.`, or `persistent/project` for a checkout session from before. */
  commandCwd: string;
  /**
   * Issue #36: real paths of the checkouts whose `git status` is known clean as the turn starts (reset, nothing
   * written since; `Checkout.isKnownClean`): the first request's environment block runs no git for them.
   */
  knownClean?: string[];
  /**
   * Issue #36: the `git status --short` lines of a folder (as the tools reach it) inside one of the session's views,
   * when the view knows them without a git over its files (`Checkout.status`); undefined otherwise (git runs).
   */
  viewStatus?: (folder: string) => Promise<string[] | undefined>;
  /**
   * Issue #36: checks the views' resets against the watch this process started ahead, in the background
   * (`Checkout.confirmWatch`: a stat pass once the walk is done), so the turn's later statuses come from the layers.
   */
  confirmViews?: () => void;
  /**
   * Issue #36: a `--commit direct` session's folder watched from now on in a one-turn host (a long-lived one watches
   * anyway): a segment start taken once the walk is done is marked, and that segment's end is staged from the watcher
   * (directChanges.ts). Started once the turn's first request is on its way: the walk then runs while the model answers.
   */
  watchAhead?: () => void;
  /** Globs relative to `workspace` whose writes need approval: the read-only Persistent Dirs in it. */
  protectedGlobs: string[];
  /**
   * Host paths a boxed command must read (read-only): the git folder of worktree checkouts, the dependency
   * folders the checkouts link to, and the protected folders of a project root inside the box (its .git
   * hooks and config, .vscode...). Carried on the tool context as `boxReadOnly`.
   */
  boxReadOnly: string[];
  /**
   * Host paths a boxed command must not see: the Keel home, wherever it lies and in every mode (this
   * session's workspace, or its /session area, is bound back on top).
   */
  boxHidden: string[];
};

/**
 * The workspace of a session for a turn: its layout (readSessionWorkspace) and, with Persistent Dirs, the
 * auto checkouts marked as worked on by a turn, so a turn finished by a host that does not commit is
 * committed before the next reset.
 */
export function sessionWorkspace(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override: string | undefined,
): SessionWorkspace {
  const config = override === undefined ? readPersistentConfig(log.dir) : undefined;
  const existing = config ? existingCheckouts(log.dir, config) : [];
  // Asked before the turn marks its checkouts dirty: right after the reset, a quiet one's status is known.
  const known = existing.filter((checkout) => checkout.isKnownClean());
  if (config) markTurnStarted(log.dir, config);
  // A view's folder is named as its tools reach it: through its holder's root (layoutOf).
  const prefix =
    config && known.some((checkout) => checkout.kind === 'view')
      ? sessionViewPrefix(log.dir, config)
      : undefined;
  const knownClean = known.map((checkout) =>
    checkout.kind === 'view' && prefix !== undefined
      ? `${prefix}${realOr(checkout.location.checkout)}`
      : realOr(checkout.location.checkout),
  );
  const views = existing.filter((checkout) => checkout.kind === 'view');
  return {
    ...layoutOf(log, created, override, config),
    knownClean,
    // The folder as the direct turn's trees name it (commitRecord.ts projectFolderOf): the watcher is found by it.
    ...(config === undefined && override === undefined
      ? { watchAhead: () => watchAhead(created.projectFolder) }
      : {}),
    ...(views.length > 0
      ? {
          viewStatus: (folder: string) => viewStatusOf(views, folder),
          confirmViews: () => {
            for (const view of views) void view.confirmWatch().catch(() => false);
          },
        }
      : {}),
  };
}

/**
 * The status of `folder` from the view it lies in, named as the tools reach it (through a holder's root, whichever
 * holder runs it now); undefined when it lies in none.
 */
function viewStatusOf(views: readonly Checkout[], folder: string): Promise<string[] | undefined> {
  const hostPath = folder.replace(/^\/proc\/\d+\/root(?=\/)/, '');
  for (const view of views) {
    const inside = path.relative(realOr(view.location.checkout), hostPath);
    if (inside === '' || (!inside.startsWith('..') && !path.isAbsolute(inside)))
      return view.status(inside.split(path.sep).join('/'));
  }
  return Promise.resolve(undefined);
}

/**
 * The workspace of a session seen from outside a turn (a terminal, an approval preview): with Persistent
 * Dirs, the box is `<dataDir>/workspace` (session/ + persistent/<name>/) and the root its project checkout
 * (the box itself for a session from before); without (`--commit direct`, sessions from before Persistent
 * Dirs), its project folder is both; `override` wins over both (no areas). Marks nothing: the only write is
 * creating a checkout session's workspace folder. Throws when the folder is gone.
 */
export function readSessionWorkspace(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override?: string,
): SessionWorkspace {
  return layoutOf(log, created, override, override === undefined ? readPersistentConfig(log.dir) : undefined);
}

function layoutOf(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override: string | undefined,
  config: PersistentConfig | undefined,
): SessionWorkspace {
  const projectRoot = created.pathRoot === 'project';
  if (!config) {
    const folder = fs.realpathSync(override ?? created.projectFolder);
    const sessionArea =
      projectRoot && override === undefined
        ? [...existingArea(log.workspaceDir, 'session'), ...artifactsArea(log)]
        : [];
    return {
      workspace: folder,
      areas: sessionArea,
      boxRoot: folder,
      hasCheckouts: false,
      promptSuffix: override === undefined ? promptSuffixOf(log.dir, created, undefined) : '',
      commandCwd: '.',
      protectedGlobs: [],
      boxReadOnly: [],
      // The box hides /tmp and $HOME whole, but a home elsewhere (/srv/keel, /var/...) would show every
      // session's log to the command; its own /session area, when it has one, is bound back on top.
      boxHidden: [fs.realpathSync(homeOf(log.dir))],
    };
  }
  fs.mkdirSync(log.workspaceDir, { recursive: true });
  const layout = checkoutLayout(log, created, config);
  // Issue #36: with a copy-on-write view mounted, every path of the box and the tools goes through its holder's
  // root (where the views are): the runner enters its namespaces for the box, Keel's file tools resolve there.
  const prefix = sessionViewPrefix(log.dir, config);
  if (prefix === undefined) return layout;
  const through = (folder: string) => `${prefix}${folder}`;
  const boxRoot = layout.boxRoot;
  const workspace = through(layout.workspace);
  return {
    ...layout,
    workspace,
    boxRoot: through(boxRoot),
    areas: layout.areas.map((area) =>
      area.root === boxRoot || area.root.startsWith(`${boxRoot}${path.sep}`)
        ? { ...area, root: through(area.root) }
        : area,
    ),
    boxReadOnly:
      workspace === through(boxRoot)
        ? layout.boxReadOnly
        : [...readOnlyPathsFor(workspace), ...layout.boxReadOnly],
  };
}

/** The `/proc/<pid>/root` of the running holder of the session's views, or undefined when none runs here. */
function sessionViewPrefix(dataDir: string, config: PersistentConfig): string | undefined {
  for (const checkout of existingCheckouts(dataDir, config)) {
    if (checkout.kind !== 'view') continue;
    const view = runningView(dataDir, checkout.location.checkout);
    if (view !== undefined) return `/proc/${view.pid}/root`;
  }
  return undefined;
}

/** The layout of a session with Persistent Dir checkouts, in host paths. */
function checkoutLayout(
  log: SessionLog,
  created: EventOf<'session_created'>,
  config: PersistentConfig,
): SessionWorkspace {
  const projectRoot = created.pathRoot === 'project';
  const boxRoot = fs.realpathSync(log.workspaceDir);
  const checkoutsReadOnly = existingCheckouts(log.dir, config).flatMap((checkout) =>
    checkout.boxReadOnlyPaths(),
  );
  const box = {
    boxRoot,
    hasCheckouts: true,
    promptSuffix: promptSuffixOf(log.dir, created, config),
    boxHidden: [fs.realpathSync(homeOf(log.dir))],
  };
  const hasProject = config.dirs.some((dir) => dir.name === 'project');
  if (!projectRoot || !hasProject) {
    return {
      ...box,
      workspace: boxRoot,
      areas: projectRoot ? [...checkoutAreas(boxRoot, config), ...artifactsArea(log)] : [],
      commandCwd: commandFolderOf(config),
      protectedGlobs: config.readOnly.map((name) => `persistent/${name}/**`),
      boxReadOnly: checkoutsReadOnly,
    };
  }
  const checkout = path.join(boxRoot, 'persistent', 'project');
  // A checkout not made yet (a preview before the first turn) is its future path; every turn makes it first.
  const workspace = fs.existsSync(checkout) ? fs.realpathSync(checkout) : checkout;
  return {
    ...box,
    workspace,
    areas: [...checkoutAreas(boxRoot, config), ...artifactsArea(log)],
    commandCwd: '.',
    protectedGlobs: config.readOnly.includes('project') ? ['**'] : [],
    boxReadOnly: [...readOnlyPathsFor(workspace), ...checkoutsReadOnly],
  };
}

/**
 * `/artifacts`: the session's record of whole command outputs (and commit patches), which a command's result
 * names when it shows only the head and tail. Read with read_file and grep; sealed, so no tool writes it.
 */
function artifactsArea(log: SessionLog): ToolArea[] {
  return fs.existsSync(log.artifactsDir)
    ? [{ prefix: '/artifacts', root: fs.realpathSync(log.artifactsDir), sealed: true }]
    : [];
}

/** The `/session` area of a workspace folder, when its private area exists. */
function existingArea(workspaceDir: string, name: 'session'): ToolArea[] {
  const folder = path.join(workspaceDir, name);
  return fs.existsSync(folder) ? [{ prefix: `/${name}`, root: fs.realpathSync(folder) }] : [];
}

/** `/session` and `/persistent/<name>` for each checkout that exists (a read-only dir's writes need approval). */
function checkoutAreas(boxRoot: string, config: PersistentConfig): ToolArea[] {
  const areas = existingArea(boxRoot, 'session');
  for (const dir of config.dirs) {
    const folder = path.join(boxRoot, 'persistent', dir.name);
    if (!fs.existsSync(folder)) continue;
    areas.push({
      prefix: `/persistent/${dir.name}`,
      root: fs.realpathSync(folder),
      ...(config.readOnly.includes(dir.name) ? { protectedGlobs: ['**'], readOnly: true } : {}),
    });
  }
  return areas;
}

/** The text after the session's pinned system prompt: where it works (fixed per configuration). */
function promptSuffixOf(
  dataDir: string,
  created: EventOf<'session_created'>,
  config: PersistentConfig | undefined,
): string {
  if (created.pathRoot !== 'project') return config ? `\n\n${describeWorkspace(config)}` : '';
  const sessionArea = fs.existsSync(sessionAreaDir(dataDir));
  return `\n\n${describeProjectRoot(config, sessionArea)}`;
}

/**
 * The system prompt a session's requests carry: its pinned prompt (or Keel's default) plus the description of
 * where it works. What `keel payload` and a manual compaction must use to match the requests a turn sends.
 */
export function systemPromptFor(dataDir: string, created: EventOf<'session_created'>): string {
  const config = readPersistentConfig(dataDir);
  return pinnedPromptOf(created, config !== undefined) + promptSuffixOf(dataDir, created, config);
}

/**
 * The prompt a session pinned when it was made, or, for a log that pinned none, Keel's default worded for
 * where that session's paths start: an old checkout session's default must not call the project its root.
 */
export function pinnedPromptOf(created: EventOf<'session_created'>, hasCheckouts: boolean): string {
  return created.systemPrompt ?? defaultSystemPromptFor(hasCheckouts && created.pathRoot !== 'project');
}

/**
 * The redactor of a session's tool output: the workspace's .env values, the environment's secrets and
 * Keel's own API keys (named `keel:<provider>`, an endpoint's `keel:endpoint:<url>`), so no command or terminal shows them.
 */
export function sessionRedactor(workspace: string, env: NodeJS.ProcessEnv, keys: ProviderKeys): Redactor {
  return createRedactor({ workspaceRoot: workspace, env, extraSecrets: namedKeys(keys) });
}

/** A redactor built on its first use, or when `build` is called (a turn host's, see turnTimeRedactor). */
export type DeferredRedactor = Redactor & { build(): void };

/**
 * The session's redactor for one turn, built (its walk of the box for .env* files included) when first used
 * or when `build()` is called, whichever comes first. The turn host calls `build()` in its `beforeChanges`,
 * which runs before anything of the turn can change the box (a tool that can, an MCP server starting, a
 * subagent): so it sees the .env files an eager build at the host's creation would, and a text-only turn
 * whose instructions need no redaction walks nothing (~0.5 ms of a 10k-event turn on the 2-core VM; a
 * project's walk grows with its folders). What its .env search could not cover is said through `onNotice`.
 */
export function turnTimeRedactor(
  workspace: string,
  env: NodeJS.ProcessEnv,
  keys: ProviderKeys,
  onNotice?: (text: string) => void,
): DeferredRedactor {
  let built: Redactor | undefined;
  const get = (): Redactor => {
    if (built) return built;
    built = sessionRedactor(workspace, env, keys);
    // What the .env search could not cover is said, not silently left unredacted (issue #38).
    const gaps = describeEnvGaps(built.envGaps);
    if (gaps !== undefined) onNotice?.(gaps);
    return built;
  };
  return {
    redact: (text) => get().redact(text),
    stream: () => get().stream(),
    get secretNames() {
      return get().secretNames;
    },
    get envFiles() {
      return get().envFiles;
    },
    get envGaps() {
      return get().envGaps;
    },
    build: () => void get(),
  };
}

/**
 * The tools' context of a session: where their paths land, the box's folders, what asks before a write, the
 * network, the redactor. The one builder of it: the turn host's tools and the approval preview (which plans a
 * call as the tool would) both take it from here. boxReadOnly / boxHidden ride along for run_command.
 */
export function toolContextFor(
  layout: SessionWorkspace,
  created: EventOf<'session_created'>,
  parts: { sessionDir: string; artifactsDir: string; redactor: Redactor; sandbox: SandboxInfo },
): Omit<ToolContext, 'idempotencyKey'> & { boxReadOnly: string[]; boxHidden: string[] } {
  const allow = sessionNetworkAllow(created);
  return {
    workspace: layout.workspace,
    areas: layout.areas,
    boxRoot: layout.boxRoot,
    sessionDir: parts.sessionDir,
    artifactsDir: parts.artifactsDir,
    redactor: parts.redactor,
    sandbox: parts.sandbox,
    network: allow.length > 0 ? { allow } : 'none',
    protectedGlobs: [...(created.protectedGlobs ?? []), ...layout.protectedGlobs],
    boxReadOnly: layout.boxReadOnly,
    boxHidden: layout.boxHidden,
    commandCwd: layout.commandCwd,
  };
}

/** The real path of `folder`, or the path itself when it cannot be resolved. */
function realOr(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return folder;
  }
}
